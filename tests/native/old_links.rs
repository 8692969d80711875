//! Every link that loaded before the lock became one `LockKind` and the faults one list
//! still loads to the same scenario. `old_links.tsv` was written by the code before that
//! change (commit a0350dc): each hash the tests, docs and browser tests use, and each deck
//! entry with every key of a link, with FNV-1a hashes of the scenario's JSON (the same
//! layout before and after) with its step and embed flag, and of its run (events, writes,
//! summary); `err` where it was refused.

use fencing_lab::core::run;
use fencing_lab::share::decode;

/// Links that named a lock no real system has, and are refused now, with why.
const NOW_REFUSED: &[(&str, &str)] = &[
    // A Redis (or Redlock) with a Chubby lock-delay: the run kept the delay while the
    // words said Redis.
    ("lockdelay=", "Redis has no lock-delay"),
    // A row lock's token source: the run ignored it.
    ("tokens=", "a row lock hands out no token"),
];

/// Links whose old scenario kept a qualifier with nothing to qualify (a replica's lag, a
/// restart or a minority with no failover or partition left): the qualifier is gone, and
/// the run is the same.
const SAME_RUN: &[&str] = &["lag=", "failover=off", "partition.A=none"];

/// Links that switched a lock service's token source to Redis: the lock-delay and the
/// fair queue were a lock service's, so the Redis that takes its place has neither (the
/// old run kept them under Redis's words).
const SERVICE_TO_REDIS: &[&str] = &["#s=lock-delay&tokens=", "#s=lock-queue&tokens="];

/// A link that names no fencing opens with fencing off now, as the page does (the failure
/// first); it opened with its entry's own (strict for most). The page writes `fence=` into
/// every link it makes, so only hand-written ones (`#s=<id>` in the docs) name none: each
/// loads, with the old default written out, what it did.
fn old_default(hash: &str) -> Option<String> {
    let entry = fencing_lab::core::deck::find(&fencing_lab::share::named_entry(hash))?;
    let own = fencing_lab::share::encode(&(entry.build)(), 0);
    let fence = own.split('&').find(|kv| kv.starts_with("fence="))?;
    Some(format!("{hash}&{fence}"))
}

/// Deck entries rebuilt on purpose since: their links load the entry as it is now.
/// renewal-herd: review 2's N3 (a lock service answering the fleet's renewals at its rate).
const REBUILT: &[&str] = &["#s=renewal-herd"];

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// What a hash loads to now, in the golden file's terms: the scenario's hash and its run's.
fn loads(hash: &str) -> Result<(String, String), String> {
    let v = decode(hash).map_err(|e| e.to_string())?;
    let json = serde_json::to_string(&v.scenario).expect("a scenario serializes");
    let t = run(&v.scenario);
    let ran = serde_json::to_string(&(&t.events, &t.writes, &t.summary)).expect("a run too");
    Ok((
        format!("{:016x}", fnv(&format!("{json}|{}|{}", v.step, v.embed))),
        format!("{:016x}", fnv(&ran)),
    ))
}

#[test]
fn every_old_link_loads_the_same_scenario() {
    let golden = include_str!("old_links.tsv");
    let mut changed = Vec::new();
    let mut excused = 0;
    let mut defaulted = 0;
    for line in golden.lines() {
        let mut cols = line.split('\t');
        let (hash, was, ran) = (cols.next().unwrap(), cols.next().unwrap(), cols.next());
        let same_run = |r: &str| SAME_RUN.iter().any(|k| hash.contains(k)) && Some(r) == ran;
        // The old default written out, where the link names no fencing (and names an entry).
        let spelled = old_default(hash).filter(|_| !hash.contains("fence="));
        let loaded = loads(spelled.as_deref().unwrap_or(hash));
        if let (Some(_), Ok((now, _))) = (&spelled, &loaded) {
            defaulted += usize::from(now == was);
            let off = decode(hash).expect("loads").scenario.policy;
            assert_eq!(off, fencing_lab::core::FencingPolicy::Off, "{hash}");
        }
        match (was, loaded) {
            ("err", Err(_)) => {}
            (was, Ok((now, _))) if now == was => {}
            (_, Ok((_, r))) if same_run(&r) => excused += 1,
            (_, Ok(_)) if SERVICE_TO_REDIS.iter().any(|k| hash.starts_with(k)) => excused += 1,
            // Still loads (a refusal would be a change), to the rebuilt entry.
            (_, Ok(_)) if REBUILT.iter().any(|k| hash.starts_with(k)) => {}
            (_, Err(why))
                if NOW_REFUSED
                    .iter()
                    .any(|(key, says)| hash.contains(key) && why.starts_with(says)) =>
            {
                excused += 1
            }
            (was, now) => changed.push(format!("{hash}: was {was}, now {now:?}")),
        }
    }
    assert!(changed.is_empty(), "{}", changed.join("\n"));
    // The exceptions stay exceptions: most links load exactly as they did.
    let count = golden.lines().count();
    assert!(
        count > 1000 && excused < 100,
        "{excused} of {count} excused"
    );
    assert!(defaulted > 700, "{defaulted} links named no fencing");
}
