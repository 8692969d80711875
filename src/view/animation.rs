//! The run as an animated GIF, for slides and READMEs (both take a GIF anywhere; APNG and
//! WebM are not accepted everywhere): one frame per step, each the page's own timeline
//! drawing with the step's narration under it.
//!
//! The shell rasterizes each frame from the SVG on the page and hands its RGBA here. This
//! module maps it onto one fixed palette made from the page's own colours (a drawing of flat
//! fills needs no per-frame quantizer, and leaving one out keeps the wasm small), keeps only
//! the rectangle that changed since the last frame, and encodes with the image-rs `gif`
//! crate. Pure and native, so tests decode what it writes.

use std::borrow::Cow;
use std::fmt;

use crate::core::{deck, story, Trace};

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

/// What one step's frame says under the drawing: where in the run it is, and its narration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caption {
    pub head: String,
    pub text: String,
}

/// The caption of `step`, from the same narration the page shows.
pub fn caption(t: &Trace, step: usize) -> Caption {
    let sc = &t.scenario;
    let title = deck::find(&sc.id).map_or(sc.id.as_str(), |e| e.title);
    let steps = story::Steps::of(t);
    Caption {
        head: format!(
            "fencing-lab · {title} · fencing {} · step {step} / {} · t = {}",
            sc.policy.code(),
            steps.last(),
            story::time_label(sc, t.snapshot_at(steps.through(step)).at)
        ),
        text: story::narration(t, step),
    }
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
    use crate::core::{run, FencingPolicy, Scenario};

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

    #[test]
    fn the_headlines_captions_tell_the_run() {
        let t = run(&Scenario::gc_pause().with_policy(FencingPolicy::Off));
        let first = caption(&t, 0);
        assert!(
            first
                .head
                .starts_with("fencing-lab · GC pause · fencing off · step 0 / "),
            "{}",
            first.head
        );
        let end = story::Steps::of(&t).last();
        let last = caption(&t, end);
        assert_eq!(last.text, story::narration(&t, end));
        assert!(
            last.head.contains(&format!("step {0} / {0}", end)),
            "{}",
            last.head
        );
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
