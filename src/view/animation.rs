//! The run as an animated GIF, for slides and READMEs (both take a GIF anywhere; APNG and
//! WebM are not accepted everywhere): one frame per step, each the page's own timeline
//! drawing framed by its punchline, with the step's narration under it. The PNG and SVG
//! exports are framed by the same punchline.
//!
//! The shell rasterizes each frame from the SVG on the page and hands its RGBA here. This
//! module maps it onto one fixed palette made from the page's own colours (a drawing of flat
//! fills needs no per-frame quantizer, and leaving one out keeps the wasm small), keeps only
//! the rectangle that changed since the last frame, and encodes with the image-rs `gif`
//! crate. Pure and native, so tests decode what it writes.

use std::borrow::Cow;
use std::fmt;

use crate::core::{deck, story, Trace};
use crate::view::panels::{self, CompareModel};
use crate::view::timeline::{esc, Geometry, VIEW_W};

/// The sizes offered: a 16:9 slide, full and smaller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    Hd,
    Sd,
}

impl Size {
    pub const ALL: [Size; 2] = [Size::Hd, Size::Sd];

    pub fn code(self) -> &'static str {
        match self {
            Size::Hd => "1280x720",
            Size::Sd => "960x540",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Size::Hd => "1280×720",
            Size::Sd => "960×540",
        }
    }

    pub fn from_code(code: &str) -> Option<Size> {
        Size::ALL.into_iter().find(|s| s.code() == code)
    }

    /// Width and height in pixels.
    pub fn dims(self) -> (u16, u16) {
        match self {
            Size::Hd => (1280, 720),
            Size::Sd => (960, 540),
        }
    }
}

/// What an exported picture says around the timeline, so that a slide holds the point and
/// not just the drawing: the entry's title and question, the storage's figure at the step,
/// and at the run's last step how it ends with fencing off and on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Punchline {
    pub title: String,
    /// The question the entry answers; empty when it has none.
    pub question: String,
    /// The storage panel's figure at the step: "Balance 90".
    pub figure: String,
    /// Where in the run, as the clock says it: "fencing strict · step 4 / 12 · t = 35 ms".
    pub position: String,
    /// At the last step, the off and on cards' words; before it, none.
    pub outcome: Vec<Card>,
}

/// One of the page's off / on cards in words: "fencing off → 80" and its one-line reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    /// The page's colour for the side: `bad` (off) or `ok` (on), as its CSS variables name them.
    pub colour: &'static str,
    pub key: String,
    pub reason: String,
}

/// The punchline of `t` at `step`; `cards` is the page's off / on comparison of the run.
pub fn punchline(t: &Trace, step: usize, cards: &CompareModel) -> Punchline {
    let sc = &t.scenario;
    let entry = deck::find(&sc.id);
    let steps = story::Steps::of(t);
    let step = step.min(steps.last());
    let storage = panels::storage(t, step);
    let outcome = if step == steps.last() {
        vec![
            Card {
                colour: "bad",
                key: format!("fencing off → {}", cards.off.value),
                reason: cards.off.outcome.clone(),
            },
            Card {
                colour: "ok",
                key: format!("fencing on ({}) → {}", cards.on_policy, cards.on.value),
                reason: cards.on.outcome.clone(),
            },
        ]
    } else {
        Vec::new()
    };
    Punchline {
        title: entry.map_or_else(|| sc.title.clone(), |e| e.title.to_owned()),
        question: entry.map_or("", |e| e.question).to_owned(),
        figure: format!("{} {}", storage.figure, storage.value),
        position: format!(
            "fencing {} · step {step} / {} · t = {}",
            sc.policy.short(),
            steps.last(),
            story::time_label(sc, t.snapshot_at(steps.through(step)).at)
        ),
        outcome,
    }
}

/// The frame's margin, in the timeline's user units (the frame is as wide as the drawing).
const MARGIN: usize = 20;
/// Type sizes: the title, the question, the figure, and the position and outcome lines.
const TITLE: usize = 24;
const QUESTION: usize = 17;
const FIGURE: usize = 24;
const LINE: usize = 16;
/// The distance between the baselines of two lines of the question or of the outcome.
const LEADING: usize = 22;

/// `text` in lines no wider than `width` at `size` px type. SVG text does not wrap, so the
/// words are counted out by a generous average glyph (0.6 em), which a line of the page's
/// sans-serif stays within.
fn lines(text: &str, size: usize, width: usize) -> Vec<String> {
    let most = (width * 10 / (6 * size)).max(1);
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > most {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push(line);
    }
    out
}

impl Punchline {
    /// The outcome's lines once wrapped: an animation keeps room for the last frame's in every
    /// frame, so the drawing stays put.
    pub fn outcome_lines(&self) -> usize {
        self.outcome.iter().map(|c| card_lines(c).len()).sum()
    }
}

fn card_lines(c: &Card) -> Vec<String> {
    lines(
        &format!("{} · {}", c.key, c.reason),
        LINE,
        VIEW_W as usize - 2 * MARGIN,
    )
}

/// `p` around the drawing of `t` as an SVG of the drawing's width: the title and question
/// above, the figure and position under it, then the outcome, with room for at least
/// `room` outcome lines. The drawing goes into its empty `<g id="timeline">`; the shell fills
/// that, the background (the bare `<rect>`), the font, and each `class`'s colour (the page's
/// `--fg`, `--muted`, `--bad`, `--ok`), none of which this module knows.
pub fn frame_svg(p: &Punchline, t: &Trace, room: usize) -> String {
    let wide = VIEW_W as usize;
    let drawing_h = Geometry::of(t).height().ceil() as usize;
    let mut words = format!(
        r#"<text class="muted" x="{}" y="{}" font-size="{LINE}" text-anchor="end">fencing-lab</text>"#,
        wide - MARGIN,
        MARGIN + TITLE
    );
    // The title keeps clear of the name at its right.
    let mut y = MARGIN - 4;
    for l in lines(&p.title, TITLE, wide - 2 * MARGIN - 8 * LINE) {
        y += TITLE + 4;
        words += &format!(
            r#"<text x="{MARGIN}" y="{y}" font-size="{TITLE}" font-weight="700">{}</text>"#,
            esc(&l)
        );
    }
    for l in lines(&p.question, QUESTION, wide - 2 * MARGIN) {
        y += LEADING + 2;
        words += &format!(
            r#"<text class="muted" x="{MARGIN}" y="{y}" font-size="{QUESTION}" font-style="italic">{}</text>"#,
            esc(&l)
        );
    }
    let top = y + MARGIN / 2 + 4;
    y = top + drawing_h + MARGIN + FIGURE;
    words += &format!(
        r#"<text x="{MARGIN}" y="{y}" font-size="{FIGURE}" font-weight="700">{} <tspan class="muted" font-size="{LINE}" font-weight="400">· {}</tspan></text>"#,
        esc(&p.figure),
        esc(&p.position)
    );
    let figure_y = y;
    y += 4;
    for c in &p.outcome {
        for (i, l) in card_lines(c).iter().enumerate() {
            y += LEADING;
            // The first line starts with the card's key, in the card's colour.
            let line = match l.strip_prefix(&c.key) {
                Some(rest) if i == 0 => format!(
                    r#"<tspan class="{}" font-weight="700">{}</tspan>{}"#,
                    c.colour,
                    esc(&c.key),
                    esc(rest)
                ),
                _ => esc(l),
            };
            words += &format!(r#"<text x="{MARGIN}" y="{y}" font-size="{LINE}">{line}</text>"#);
        }
    }
    let bottom = y.max(figure_y + 4 + room * LEADING) + MARGIN - 4;
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {wide} {bottom}" width="{wide}" height="{bottom}"><rect width="100%" height="100%"/>{words}<g id="timeline" transform="translate(0 {top})"/></svg>"#
    )
}

/// How long a step's frame stays, in hundredths of a second: 1.5 s plus a quarter second a
/// word, so a caption can be read, at most 6 s; the last frame holds 2 s more before the loop.
pub fn delay_cs(text: &str, last: bool) -> u16 {
    let words = u16::try_from(text.split_whitespace().count()).unwrap_or(u16::MAX);
    let read = words.saturating_mul(25).saturating_add(150).min(600);
    if last {
        read + 200
    } else {
        read
    }
}

/// At most this many page colours are kept; each brings [`BLENDS`] blends toward the
/// background, so the palette stays within the 256 entries a GIF has.
const MAX_COLOURS: usize = 36;
/// Blends of each colour toward the background: the shades of its anti-aliased edges.
const BLENDS: u16 = 6;

/// The page's colours and their blends toward the background, with a lookup of the nearest
/// entry for every cell of a 6-bit-a-channel grid, filled as the cells are met.
#[derive(Debug, Clone)]
pub struct Palette {
    rgb: Vec<[u8; 3]>,
    /// Per grid cell: its entry, or `UNKNOWN` until a pixel falls in it.
    nearest: Vec<u16>,
}

const UNKNOWN: u16 = u16::MAX;

/// A colour's cell of the 6-bit-a-channel grid.
fn cell(c: [u8; 3]) -> usize {
    (usize::from(c[0] >> 2) << 12) | (usize::from(c[1] >> 2) << 6) | usize::from(c[2] >> 2)
}

impl Palette {
    /// `background` first, then the page's `colours` (repeats are dropped; past
    /// [`MAX_COLOURS`] the rest are left to their nearest).
    pub fn new(background: [u8; 3], colours: &[[u8; 3]]) -> Palette {
        let mut base = vec![background];
        for c in colours {
            if !base.contains(c) && base.len() < MAX_COLOURS {
                base.push(*c);
            }
        }
        let mut rgb = base.clone();
        for c in &base[1..] {
            for k in 1..BLENDS {
                let mix = |a: u8, b: u8| {
                    let (a, b) = (u16::from(a), u16::from(b));
                    ((a * (BLENDS - k) + b * k + BLENDS / 2) / BLENDS) as u8
                };
                let blend = [0, 1, 2].map(|i| mix(c[i], background[i]));
                if !rgb.contains(&blend) {
                    rgb.push(blend);
                }
            }
        }
        let mut nearest = vec![UNKNOWN; 1 << 18];
        // A page colour's own cell is its own: the flat fills come out exact. The page's
        // colours are seeded last, so they win a cell over a blend.
        for (i, c) in rgb.iter().enumerate().rev() {
            nearest[cell(*c)] = i as u16;
        }
        Palette { rgb, nearest }
    }

    pub fn colours(&self) -> &[[u8; 3]] {
        &self.rgb
    }

    /// The palette's entry for a pixel: the one nearest to the middle of its grid cell.
    pub fn index(&mut self, c: [u8; 3]) -> u8 {
        let k = cell(c);
        if self.nearest[k] == UNKNOWN {
            self.nearest[k] = u16::from(self.closest(c.map(|v| (v & 0xFC) | 2)));
        }
        self.nearest[k] as u8
    }

    /// The entry nearest to `c`, by a distance weighted as the eye weighs green over red
    /// over blue.
    fn closest(&self, c: [u8; 3]) -> u8 {
        let d = |p: &[u8; 3]| {
            let e = |i: usize| i32::from(p[i]) - i32::from(c[i]);
            3 * e(0) * e(0) + 4 * e(1) * e(1) + 2 * e(2) * e(2)
        };
        let best = (0..self.rgb.len()).min_by_key(|&i| d(&self.rgb[i]));
        best.unwrap_or(0) as u8
    }

    /// The global colour table: `r g b` per entry.
    fn table(&self) -> Vec<u8> {
        self.rgb.iter().flatten().copied().collect()
    }
}

/// Why a frame could not be added, or the file finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnimationError {
    /// The RGBA handed over is not width × height × 4 bytes.
    WrongSize { expected: usize, got: usize },
    /// The encoder refused (its message).
    Gif(String),
}

impl fmt::Display for AnimationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnimationError::WrongSize { expected, got } => write!(
                f,
                "a frame came as {got} bytes of RGBA where {expected} were expected"
            ),
            AnimationError::Gif(e) => write!(f, "the GIF encoder stopped: {e}"),
        }
    }
}

impl std::error::Error for AnimationError {}

impl From<gif::EncodingError> for AnimationError {
    fn from(e: gif::EncodingError) -> Self {
        AnimationError::Gif(e.to_string())
    }
}

/// A GIF being written, a frame at a time, in memory.
pub struct Animation {
    encoder: gif::Encoder<Vec<u8>>,
    palette: Palette,
    width: u16,
    height: u16,
    /// The last frame's palette indices, whole: each new frame keeps only what differs.
    previous: Option<Vec<u8>>,
    frames: usize,
}

/// The smallest rectangle holding every pixel where `a` and `b` differ, as
/// `(left, top, width, height)`; `None` when they are the same.
fn changed(a: &[u8], b: &[u8], width: usize) -> Option<(usize, usize, usize, usize)> {
    let mut rows = a.chunks(width).zip(b.chunks(width)).enumerate();
    let mut bounds: Option<(usize, usize, usize, usize)> = None;
    for (y, (ra, rb)) in &mut rows {
        let Some(x0) = ra.iter().zip(rb).position(|(p, q)| p != q) else {
            continue;
        };
        let x1 = width
            - 1
            - ra.iter()
                .rev()
                .zip(rb.iter().rev())
                .position(|(p, q)| p != q)
                .unwrap_or(0);
        bounds = Some(match bounds {
            None => (x0, y, x1, y),
            Some((l, t, r, _)) => (l.min(x0), t, r.max(x1), y),
        });
    }
    bounds.map(|(l, t, r, b)| (l, t, r - l + 1, b - t + 1))
}

impl Animation {
    /// A looping GIF of `size`, every frame on `palette`.
    pub fn new(size: (u16, u16), palette: Palette) -> Result<Animation, AnimationError> {
        let (width, height) = size;
        let mut encoder = gif::Encoder::new(Vec::new(), width, height, &palette.table())?;
        encoder.set_repeat(gif::Repeat::Infinite)?;
        Ok(Animation {
            encoder,
            palette,
            width,
            height,
            previous: None,
            frames: 0,
        })
    }

    /// Adds one frame of RGBA (alpha is ignored: the frames are drawn on an opaque
    /// background), shown for `delay_cs` hundredths of a second.
    pub fn push(&mut self, rgba: &[u8], delay_cs: u16) -> Result<(), AnimationError> {
        let (w, h) = (usize::from(self.width), usize::from(self.height));
        if rgba.len() != w * h * 4 {
            return Err(AnimationError::WrongSize {
                expected: w * h * 4,
                got: rgba.len(),
            });
        }
        let indices: Vec<u8> = rgba
            .chunks_exact(4)
            .map(|p| self.palette.index([p[0], p[1], p[2]]))
            .collect();
        // The first frame whole; then the rectangle that changed (one pixel when none did,
        // so the frame still holds its delay).
        let (l, t, fw, fh) = match &self.previous {
            None => (0, 0, w, h),
            Some(prev) => changed(prev, &indices, w).unwrap_or((0, 0, 1, 1)),
        };
        let buffer: Vec<u8> = indices
            .chunks(w)
            .skip(t)
            .take(fh)
            .flat_map(|row| &row[l..l + fw])
            .copied()
            .collect();
        let frame = gif::Frame {
            delay: delay_cs,
            dispose: gif::DisposalMethod::Keep,
            left: l as u16,
            top: t as u16,
            width: fw as u16,
            height: fh as u16,
            buffer: Cow::Owned(buffer),
            ..gif::Frame::default()
        };
        self.encoder.write_frame(&frame)?;
        self.previous = Some(indices);
        self.frames += 1;
        Ok(())
    }

    pub fn frames(&self) -> usize {
        self.frames
    }

    /// The finished file.
    pub fn finish(self) -> Result<Vec<u8>, AnimationError> {
        Ok(self.encoder.into_inner()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{FencingPolicy, Scenario};
    use crate::lab::Lab;
    use std::sync::Arc;

    const BG: [u8; 3] = [255, 255, 255];
    const INK: [u8; 3] = [27, 29, 33];
    const RED: [u8; 3] = [192, 38, 45];

    /// A `w`×`h` RGBA picture of background with a `colour` rectangle.
    fn picture(w: usize, h: usize, rect: (usize, usize, usize, usize), colour: [u8; 3]) -> Vec<u8> {
        let mut out = Vec::with_capacity(w * h * 4);
        for y in 0..h {
            for x in 0..w {
                let inside = (rect.0..rect.0 + rect.2).contains(&x)
                    && (rect.1..rect.1 + rect.3).contains(&y);
                let c = if inside { colour } else { BG };
                out.extend_from_slice(&[c[0], c[1], c[2], 255]);
            }
        }
        out
    }

    fn decoder(bytes: &[u8]) -> gif::Decoder<&[u8]> {
        let mut options = gif::DecodeOptions::new();
        options.set_color_output(gif::ColorOutput::Indexed);
        options.read_info(bytes).expect("a GIF")
    }

    #[test]
    fn the_palette_keeps_the_page_colours_and_their_edges() {
        let mut p = Palette::new(BG, &[INK, RED, INK]);
        assert_eq!(
            &p.colours()[..3],
            &[BG, INK, RED],
            "repeats dropped, order kept"
        );
        assert_eq!(p.colours().len(), 3 + 2 * 5, "five blends a colour");
        assert_eq!(p.index(RED), 2);
        assert_eq!(p.index(BG), 0);
        // Half red, half white (an anti-aliased edge) maps to a blend, not to either end.
        let i = p.index([224, 147, 150]);
        let half = p.colours()[usize::from(i)];
        assert!(half != RED && half != BG, "{half:?}");
        // Near-white maps to white, near-ink to ink.
        assert_eq!(p.index([252, 253, 255]), 0);
        assert_eq!(p.index([30, 30, 36]), 1);
        // However many colours the page has, the palette fits a GIF.
        let many: Vec<[u8; 3]> = (0..200u8).map(|i| [i, 255 - i, i / 2]).collect();
        assert!(Palette::new(BG, &many).colours().len() <= 256);
    }

    #[test]
    fn frames_after_the_first_keep_only_what_changed() {
        let (w, h) = (64, 36);
        let mut a = Animation::new((w as u16, h as u16), Palette::new(BG, &[INK, RED])).unwrap();
        a.push(&picture(w, h, (4, 4, 10, 6), INK), 150).unwrap();
        a.push(&picture(w, h, (4, 4, 10, 6), RED), 200).unwrap();
        a.push(&picture(w, h, (4, 4, 10, 6), RED), 300).unwrap();
        assert_eq!(a.frames(), 3);
        let bytes = a.finish().unwrap();

        let mut d = decoder(&bytes);
        assert_eq!((d.width(), d.height()), (64, 36));
        assert_eq!(d.repeat(), gif::Repeat::Infinite);
        let mut seen = Vec::new();
        while let Some(f) = d.read_next_frame().unwrap() {
            seen.push((f.left, f.top, f.width, f.height, f.delay, f.buffer.to_vec()));
        }
        assert_eq!(seen.len(), 3);
        let (l, t, fw, fh, delay, first) = &seen[0];
        assert_eq!((*l, *t, *fw, *fh, *delay), (0, 0, 64, 36, 150));
        assert_eq!(first[0], 0, "background");
        assert_eq!(first[5 * 64 + 5], 1, "the ink rectangle");
        let (l, t, fw, fh, delay, second) = &seen[1];
        assert_eq!(
            (*l, *t, *fw, *fh, *delay),
            (4, 4, 10, 6, 200),
            "only the rectangle"
        );
        assert!(second.iter().all(|&i| i == 2), "now red");
        let (.., fw, fh, delay, _) = &seen[2];
        assert_eq!(
            (*fw, *fh, *delay),
            (1, 1, 300),
            "nothing changed: one pixel"
        );
    }

    #[test]
    fn a_frame_of_the_wrong_size_is_refused_with_a_reason() {
        let mut a = Animation::new((8, 8), Palette::new(BG, &[INK])).unwrap();
        let e = a.push(&[0; 10], 100).unwrap_err();
        assert_eq!(
            e,
            AnimationError::WrongSize {
                expected: 256,
                got: 10
            }
        );
        assert_eq!(
            e.to_string(),
            "a frame came as 10 bytes of RGBA where 256 were expected"
        );
        assert_eq!(a.frames(), 0);
    }

    /// The words of an SVG frame, a space between two of its `<text>`s, as a reader sees them.
    fn words(svg: &str) -> String {
        let mut out = Vec::new();
        for text in svg.split("</text>") {
            let mut plain = String::new();
            let mut in_tag = false;
            for c in text.chars() {
                match c {
                    '<' => in_tag = true,
                    '>' => in_tag = false,
                    c if !in_tag => plain.push(c),
                    _ => {}
                }
            }
            out.push(
                plain
                    .replace("&#39;", "'")
                    .replace("&quot;", "\"")
                    .replace("&lt;", "<")
                    .replace("&gt;", ">")
                    .replace("&amp;", "&"),
            );
        }
        out.join(" ")
    }

    /// The headline's runs as the page holds them: the run and its off / on cards.
    fn headline(policy: FencingPolicy) -> (Arc<Trace>, CompareModel) {
        let lab = Lab::new(Scenario::gc_pause().with_policy(policy));
        let (off, on) = lab.compare();
        (Arc::clone(lab.trace()), panels::compare(off, on))
    }

    #[test]
    fn every_frame_says_the_question_and_the_balance_and_the_last_how_it_ends() {
        for policy in [FencingPolicy::Off, FencingPolicy::Strict] {
            let (t, cards) = headline(policy);
            let last = story::Steps::of(&t).last();
            let entry = deck::find("gc-pause").unwrap();
            let mut balances = Vec::new();
            for step in 0..=last {
                let svg = frame_svg(&punchline(&t, step, &cards), &t, 0);
                assert!(
                    svg.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg""#),
                    "{svg}"
                );
                assert_eq!(svg.matches(r#"<g id="timeline""#).count(), 1);
                let said = words(&svg);
                assert!(said.contains("GC pause"), "{said}");
                assert!(said.contains(entry.question), "{said}");
                let balance = story::Story::of(&t).value(step);
                assert!(
                    said.contains(&format!("Balance {balance} · fencing {}", policy.short())),
                    "step {step}: {said}"
                );
                assert!(said.contains(&format!("step {step} / {last}")), "{said}");
                balances.push(balance);
                let off = format!("fencing off → {} · {}", cards.off.value, cards.off.outcome);
                let on = format!(
                    "fencing on ({}) → {} · {}",
                    cards.on_policy, cards.on.value, cards.on.outcome
                );
                assert_eq!(said.contains(&off), step == last, "step {step}: {said}");
                assert_eq!(said.contains(&on), step == last, "step {step}: {said}");
                assert_eq!(svg.contains(r#"<tspan class="bad""#), step == last);
            }
            // The balance moves with the run: 100 before the debits, the run's own end after.
            assert_eq!(balances[0], "100");
            assert_eq!(balances[last], story::final_value(&t));
        }
        let (_, cards) = headline(FencingPolicy::Off);
        assert_eq!(
            (cards.off.value.as_str(), cards.on.value.as_str()),
            ("80", "90")
        );
    }

    #[test]
    fn an_animation_keeps_room_for_the_outcome_so_the_drawing_stays_put() {
        let (t, cards) = headline(FencingPolicy::Off);
        let last = story::Steps::of(&t).last();
        let end = punchline(&t, last, &cards);
        assert!(end.outcome_lines() >= 2);
        // The viewBox's height: the fourth of `0 0 1000 h`.
        let height = |svg: &str| -> usize {
            let vb = svg.split('"').nth(3).unwrap_or_default();
            vb.rsplit(' ').next().and_then(|h| h.parse().ok()).unwrap()
        };
        let first = frame_svg(&punchline(&t, 0, &cards), &t, end.outcome_lines());
        let shown = frame_svg(&end, &t, end.outcome_lines());
        assert_eq!(height(&first), height(&shown), "{first}");
        // A still export holds only its own lines: shorter before the end.
        let still = frame_svg(&punchline(&t, 0, &cards), &t, 0);
        assert!(height(&still) < height(&shown), "{still}");
        let timeline = |svg: &str| svg.split(r#"<g id="timeline" "#).nth(1).map(str::to_owned);
        assert_eq!(timeline(&first), timeline(&shown));
    }

    #[test]
    fn long_words_wrap_within_the_frame() {
        let text = "Your lock has a TTL. What happens if the holder stalls longer than the TTL?";
        let wrapped = lines(text, 24, 300);
        assert!(wrapped.len() > 1);
        assert!(wrapped
            .iter()
            .all(|l| l.chars().count() <= 300 * 10 / (6 * 24)));
        assert_eq!(wrapped.join(" "), text);
        assert_eq!(lines("", 16, 960), Vec::<String>::new());
        assert_eq!(lines(text, 16, 960), vec![text.to_owned()]);
    }

    #[test]
    fn a_frame_stays_long_enough_to_read() {
        assert_eq!(delay_cs("", false), 150);
        assert_eq!(delay_cs("four words right here", false), 250);
        assert_eq!(delay_cs("four words right here", true), 450);
        assert_eq!(delay_cs(&"word ".repeat(100), false), 600, "at most 6 s");
        assert!(Size::ALL
            .iter()
            .all(|s| Size::from_code(s.code()) == Some(*s)));
        assert_eq!(Size::Sd.dims(), (960, 540));
    }
}
