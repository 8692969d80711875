//! What the page shows, as typed view models computed from the [`crate::lab::Lab`] (the
//! crux pattern: `view(&Model) -> ViewModel`). Pure and native, so tests assert fields;
//! the Leptos shell in `ui` only renders them.

pub mod animation;
pub mod fork;
pub mod geometry;
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
    /// The reveal on or off.
    Reveal,
    /// The presenter toolbar's: laser, speaker view, keys sheet, leave presenter mode.
    Laser,
    Speaker,
    Keys,
    Exit,
}

impl Act {
    pub const ALL: [Act; 17] = [
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
        Act::Reveal,
        Act::Laser,
        Act::Speaker,
        Act::Keys,
        Act::Exit,
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
            Act::Reveal => "reveal",
            Act::Laser => "laser",
            Act::Speaker => "speaker",
            Act::Keys => "keys",
            Act::Exit => "exit",
        }
    }

    pub fn from_code(code: &str) -> Option<Act> {
        Act::ALL.into_iter().find(|a| a.code() == code)
    }
}

/// A select's options as markup (they never change, so the select sets them as its inner
/// HTML before its value): code, label and a tooltip (empty for none).
pub fn options<I>(items: I) -> String
where
    I: IntoIterator<Item = (String, String, &'static str)>,
{
    use timeline::esc;
    items
        .into_iter()
        .map(|(code, label, title)| {
            let title = if title.is_empty() {
                String::new()
            } else {
                format!(r#" title="{}""#, esc(title))
            };
            format!(
                r#"<option value="{}"{title}>{}</option>"#,
                esc(&code),
                esc(&label)
            )
        })
        .collect()
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

    #[test]
    fn options_are_escaped_markup() {
        let html = options([
            ("a".to_owned(), "1. <A>".to_owned(), ""),
            ("b".to_owned(), "B".to_owned(), "it's b"),
        ]);
        assert_eq!(
            html,
            r#"<option value="a">1. &lt;A&gt;</option><option value="b" title="it&#39;s b">B</option>"#
        );
    }
}
