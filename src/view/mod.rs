//! What the page shows, as typed view models computed from the [`crate::lab::Lab`] (the
//! crux pattern: `view(&Model) -> ViewModel`). Pure and native, so tests assert fields;
//! the Leptos shell in `ui` only renders them.

pub mod panels;
pub mod timeline;

/// The page's buttons. Each carries its code in `data-act`; one click handler on the app
/// reads it back with [`Act::from_code`] (a closure per button would cost wasm for nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    Reset,
    Back,
    Play,
    Forward,
    Fork,
    Explore,
    Svg,
    Png,
    Notes,
    Present,
    Theme,
    Dismiss,
}

impl Act {
    pub const ALL: [Act; 12] = [
        Act::Reset,
        Act::Back,
        Act::Play,
        Act::Forward,
        Act::Fork,
        Act::Explore,
        Act::Svg,
        Act::Png,
        Act::Notes,
        Act::Present,
        Act::Theme,
        Act::Dismiss,
    ];

    pub fn code(self) -> &'static str {
        match self {
            Act::Reset => "reset",
            Act::Back => "back",
            Act::Play => "play",
            Act::Forward => "forward",
            Act::Fork => "fork",
            Act::Explore => "explore",
            Act::Svg => "svg",
            Act::Png => "png",
            Act::Notes => "notes",
            Act::Present => "present",
            Act::Theme => "theme",
            Act::Dismiss => "dismiss",
        }
    }

    pub fn from_code(code: &str) -> Option<Act> {
        Act::ALL.into_iter().find(|a| a.code() == code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_act_reads_back_its_own_code() {
        for a in Act::ALL {
            assert_eq!(Act::from_code(a.code()), Some(a));
        }
        assert_eq!(Act::from_code("nope"), None);
    }
}
