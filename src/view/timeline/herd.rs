//! The renewal herd's chart: how many renewals the lock server takes per bucket, fixed
//! schedule against jittered.

use super::{n, Bar, Link, Text};

/// The thundering herd as two bar charts (fixed schedule above, jittered below): renewals
/// the lock server takes per bucket, on one shared scale.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HerdChart {
    pub rows: Vec<HerdRow>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HerdRow {
    /// `fixed` or `jittered` (a CSS class too).
    pub class: &'static str,
    pub label: Text,
    pub peak: Text,
    pub bars: Vec<Bar>,
    /// The row's base line, from x1 to x2 at y.
    pub base: Link,
}

pub fn herd(fixed: &crate::core::HerdReport, jittered: &crate::core::HerdReport) -> HerdChart {
    const W: f64 = 1000.0;
    const LEFT: f64 = 150.0;
    const ROW: f64 = 64.0;
    let peak = fixed
        .peak_per_bucket()
        .max(jittered.peak_per_bucket())
        .max(1) as f64;
    let rows = [
        (fixed, "fixed schedule", "fixed"),
        (jittered, "±25% jitter", "jittered"),
    ]
    .into_iter()
    .enumerate()
    .map(|(row, (report, label, class))| {
        let base = 10.0 + ROW * (row as f64 + 1.0);
        let buckets = report.per_bucket.len().max(1) as f64;
        let bar_w = (W - LEFT - 10.0) / buckets;
        HerdRow {
            class,
            label: Text {
                x: 8.0,
                y: base - 26.0,
                text: label.to_owned(),
            },
            peak: Text {
                x: 8.0,
                y: base - 8.0,
                text: format!(
                    "peak {} / {} ms",
                    report.peak_per_bucket(),
                    report.bucket_ms
                ),
            },
            bars: report
                .per_bucket
                .iter()
                .enumerate()
                .filter(|(_, c)| **c > 0)
                .map(|(i, count)| {
                    let h = (ROW - 12.0) * f64::from(*count) / peak;
                    Bar {
                        x: LEFT + bar_w * i as f64,
                        y: base - h,
                        w: bar_w.max(0.6),
                        h: h.max(0.6),
                    }
                })
                .collect(),
            base: Link {
                x1: LEFT,
                y1: base,
                x2: W - 10.0,
                y2: base,
            },
        }
    })
    .collect();
    HerdChart { rows }
}

/// The herd chart as SVG markup (its texts are fixed words and numbers: nothing to escape).
pub fn herd_markup(chart: &HerdChart) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(16 * 1024);
    for r in &chart.rows {
        let _ = write!(
            out,
            r#"<text class="herd-label" x="{}" y="{}">{}</text><text class="herd-peak" x="{}" y="{}">{}</text>"#,
            n(r.label.x),
            n(r.label.y),
            r.label.text,
            n(r.peak.x),
            n(r.peak.y),
            r.peak.text
        );
        for b in &r.bars {
            let _ = write!(
                out,
                r#"<rect class="herd-bar {}" x="{}" y="{}" width="{}" height="{}"></rect>"#,
                r.class,
                n(b.x),
                n(b.y),
                n(b.w),
                n(b.h)
            );
        }
        let _ = write!(
            out,
            r#"<line class="tick" x1="{}" x2="{}" y1="{}" y2="{}"></line>"#,
            n(r.base.x1),
            n(r.base.x2),
            n(r.base.y1),
            n(r.base.y2)
        );
    }
    out
}
