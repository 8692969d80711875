//! What a run ends with, as the storage holds it: predicted by the core, or read back from
//! the real storage, and shown on one line of the table.

use fencing_lab::core::{Trace, WriteRecord};

/// One storage attempt: who, with which token, what the storage answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub writer: String,
    pub token: Option<u64>,
    pub code: String,
}

/// What a run ends with, predicted by the core or read back from the real storage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub balance: i64,
    pub last_fence: Option<u64>,
    /// The job's result row (scenarios that publish).
    pub result: Option<String>,
    /// Calls to the outside system that never sees a token (the card charge).
    pub side_effects: i64,
    /// Provider calls that charged, and those deduped by their idempotency key.
    pub provider: (i64, i64),
    pub writes: Vec<Attempt>,
}

/// What the core predicts, read off its run of the scenario.
pub fn predict(trace: &Trace) -> Outcome {
    let s = &trace.summary;
    let writes = trace.writes.iter().map(|w| Attempt {
        writer: w.request.writer.clone(),
        token: w.request.fence.map(|f| f.0),
        code: code(w).to_owned(),
    });
    Outcome {
        balance: s.final_balance,
        last_fence: s.last_fence.map(|f| f.0),
        result: trace.snapshot_at(trace.len()).result.clone(),
        side_effects: s.side_effects as i64,
        provider: (s.provider_charges as i64, s.provider_deduped as i64),
        writes: writes.collect(),
    }
}

/// What storage answered a write: `ok`, or its refusal's code.
pub fn code(w: &WriteRecord) -> &'static str {
    w.result.as_ref().map_or_else(|e| e.code(), |()| "ok")
}

/// An outcome on one line: `90 / 34 / B#34 ok, A#33 stale_fence`.
pub fn show(o: &Outcome) -> String {
    let mut line = o.balance.to_string();
    if let Some(r) = &o.result {
        line += &format!(" “{r}”");
    }
    let fence = (o.last_fence).map_or_else(|| "none".to_owned(), |f| f.to_string());
    line += &format!(" / {fence} / {}", show_writes(&o.writes));
    if o.side_effects > 0 {
        line += &format!(" / {} side effects", o.side_effects);
    }
    let (c, d) = o.provider;
    if (c, d) != (0, 0) {
        line += &format!(" / provider {c} charged, {d} deduped");
    }
    line
}

/// Write attempts on one line: `B#34 ok, A#33 stale_fence`.
pub fn show_writes(writes: &[Attempt]) -> String {
    let shown = writes.iter().map(|w| match w.token {
        Some(t) => format!("{}#{t} {}", w.writer, w.code),
        None => format!("{}- {}", w.writer, w.code),
    });
    shown.collect::<Vec<_>>().join(", ")
}
