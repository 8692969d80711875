//! The third story review (issue 40, `notes/review-3.md`): each finding pinned by a test
//! that fails on the words before it was fixed.

use fencing_lab::core::deck::{self, PushBack, DECK};
use fencing_lab::core::story;
use fencing_lab::core::{run, EventKind, FencingPolicy, Trace};

fn run_as(id: &str, policy: FencingPolicy) -> Trace {
    run(&(deck::find(id).unwrap().build)().with_policy(policy))
}

fn runs_of(id: &str) -> [Trace; 3] {
    FencingPolicy::ALL.map(|p| run_as(id, p))
}

fn notes(id: &str) -> String {
    let e = deck::find(id).unwrap();
    (e.notes)(&deck::runs(e)).join("\n")
}

/// Every narration and Say line of a run, step 0 included.
fn words(t: &Trace) -> Vec<String> {
    let s = story::Story::of(t);
    (0..=story::Steps::of(t).last())
        .flat_map(|i| [s.narration(i), s.say(i)])
        .collect()
}

/// The step showing the first event that matches `pred`.
fn step_of(t: &Trace, pred: impl Fn(&fencing_lab::core::TraceEvent) -> bool) -> usize {
    let i = t.events.iter().position(pred).expect("no such event");
    story::Steps::of(t).showing(i)
}

fn pushback(id: &str, question_has: &str) -> &'static PushBack {
    let e = DECK.iter().find(|e| e.id == id).unwrap();
    e.pushbacks
        .iter()
        .find(|p| p.question.contains(question_has))
        .expect("no such push-back")
}

/// F1: the margin is sized for the slew the clock discipline allows, not ntpd's 500 ppm.
#[test]
fn f1_the_drift_margin_covers_the_slew_not_quartz() {
    let n = notes("drift-margin");
    assert!(!n.contains("NTP slews a clock by at most 500 ppm"), "{n}");
    for want in [
        "ntpd slews at most 500 ppm, chrony up to 83,333 ppm by default, its maxslewrate",
        "CLOCK_MONOTONIC is slewed too",
        "size it for the slew your clock discipline allows",
    ] {
        assert!(n.contains(want), "{want}: {n}");
    }
    let p = pushback("drift-margin", "How big");
    assert!(p.answer.contains("chrony 83,333 ppm") && p.source.contains("maxslewrate"));
}

/// M1: Redlock's fenced 90 is a counterfactual on the outcome card and the deck row, once.
#[test]
fn m1_the_counterfactual_90_says_so() {
    let [off, strict, same] = runs_of("clock-jump");
    for t in [&strict, &same] {
        assert_eq!(
            story::outcome(t),
            "A's 33 refused: stale_fence; last fence 34 (counterfactual: Redlock mints no token)"
        );
    }
    assert!(!story::outcome(&off).contains("counterfactual"));
    assert!(!story::outcome(&run_as("gc-pause", FencingPolicy::Strict)).contains("counterfactual"));
    let row = deck::table()
        .lines()
        .find(|l| l.contains("`clock-jump`"))
        .unwrap()
        .to_owned();
    assert_eq!(
        row.matches("counterfactual: Redlock mints no token")
            .count(),
        2,
        "{row}"
    );
}

/// M3: the herd's capacity is the model's assumption; no etcd v2 write benchmark sizes v3
/// keep-alives, and the notes say what really makes renewals queue.
#[test]
fn m3_the_herd_capacity_is_an_assumption() {
    let n = notes("renewal-herd");
    assert!(!n.contains("v2.1") && !n.contains("benchmark"), "{n}");
    for want in [
        "The model assumes the service answers 2,000 commands a second",
        "an overloaded leader or an fsync stall holds every renewal due meanwhile",
    ] {
        assert!(n.contains(want), "{want}: {n}");
    }
    let e = deck::find("renewal-herd").unwrap();
    assert!(e.pushbacks.iter().all(|p| !p.source.contains("v2.1")));
}

/// M4: B's debit is sent inside its lease; the race is two arrivals at once.
#[test]
fn m4_storage_check_b_is_not_late() {
    for t in runs_of("storage-check") {
        let sent = step_of(&t, |e| {
            matches!(e.kind, EventKind::WriteSent { .. }) && e.actor.as_deref() == Some("B")
        });
        let say = story::Story::of(&t).say(sent);
        assert_eq!(
            say,
            "B's request is on its way, inside its lease; A's will reach storage at the same instant."
        );
    }
    // A late request keeps its line.
    let t = run_as("delayed-packet", FencingPolicy::Off);
    assert!(words(&t)
        .iter()
        .any(|w| w == "A request can sit in a queue long after the lease that sent it is gone."));
}

/// U3: deleting Redlock's leftover minority keys is tidying, not a contradiction.
#[test]
fn u3_clock_jump_release_words_agree() {
    for t in runs_of("clock-jump") {
        let w = words(&t).join("\n");
        assert!(!w.contains("so nothing is released"), "{w}");
        assert!(w.contains(
            "Its leftover keys on nodes 1 and 2 (2 of 5) are deleted, which only clears them before their PX runs out: its lock had already ended with its majority, so no lock was left to release."
        ), "{w}");
    }
}

/// U4: Chubby releases through a handle; ZooKeeper's lease is a session.
#[test]
fn u4_each_system_in_its_own_words() {
    for t in runs_of("lock-delay") {
        let w = words(&t).join("\n");
        for old in [
            "key is still this client's",
            "the key is not this client's",
            "checked delete",
        ] {
            assert!(!w.contains(old), "{old}: {w}");
        }
        assert!(
            w.contains("The release checks the lock is still this client's"),
            "{w}"
        );
    }
    for t in runs_of("lock-queue") {
        let w = words(&t).join("\n");
        assert!(!w.contains("TTL ran out"), "{w}");
        assert!(
            w.contains("its session timed out on the lock server, which deleted its node, so the lock is free"),
            "{w}"
        );
    }
}

/// U5: the model polls an etcd lock, and says so; etcd's Mutex waits on a watch.
#[test]
fn u5_polling_an_etcd_lock_is_the_models() {
    for id in ["raft-partition", "sequencer"] {
        for t in runs_of(id) {
            let w = words(&t).join("\n");
            assert!(
                !w.contains("randomised in a real client") && !w.contains("Polling"),
                "{id}: {w}"
            );
            assert!(
                w.contains("(the model polls; etcd and ZooKeeper locks wait on a watch)"),
                "{id}: {w}"
            );
        }
    }
    // Redis clients do retry.
    let w = words(&run_as("gc-pause", FencingPolicy::Off)).join("\n");
    assert!(w.contains("randomised in a real client"), "{w}");
}

/// U6: the Redis failover and restart setups carry the scale clause, and the failover says
/// how fast a real Sentinel is.
#[test]
fn u6_redis_failures_are_scaled() {
    for (id, sentinel) in [("redis-failover", true), ("redis-restart", false)] {
        for t in runs_of(id) {
            let setup = story::Story::of(&t).narration(0);
            assert!(
                setup.contains("Times scaled: 30 ms here stands for 30 s."),
                "{id}: {setup}"
            );
            let crash = step_of(&t, |e| matches!(e.kind, EventKind::Failover { .. }));
            let n = story::Story::of(&t).narration(crash);
            let says = "A real Sentinel first waits down-after-milliseconds (30 s by default)";
            assert_eq!(n.contains(says), sentinel, "{id}: {n}");
        }
    }
    let plain = story::Story::of(&run_as("gc-pause", FencingPolicy::Off)).narration(0);
    assert!(!plain.contains("Times scaled"), "{plain}");
}

/// U1: the retry's refusal is said in one short line; the advice is in the notes.
#[test]
fn u1_same_token_retry_says_it_short() {
    let t = run_as("same-token-retry", FencingPolicy::Strict);
    let refused = step_of(&t, |e| e.result_code() == "stale_fence");
    let say = story::Story::of(&t).say(refused);
    assert!(say.split_whitespace().count() <= 35, "{say}");
    assert!(!say.contains("Check the key first"), "{say}");
    assert!(notes("same-token-retry").contains(
        "A storage that looked the key up first would answer the retry under strict too."
    ));
}

/// U7: renewal's late self-cancel sent nothing before the pause: it names the race instead.
#[test]
fn u7_renewal_self_cancel_is_true_of_this_run() {
    for t in runs_of("renewal") {
        let failed = step_of(&t, |e| matches!(e.kind, EventKind::ExtendFailed { .. }));
        let say = story::Story::of(&t).say(failed);
        assert!(
            !say.contains("cannot recall a write sent before the pause"),
            "{say}"
        );
        assert!(
            say.contains("had the worker run first, its debit would have gone out"),
            "{say}"
        );
    }
}

/// U2: raft-partition's notes drop the replay aside the page never introduces.
#[test]
fn u2_no_replay_aside() {
    let n = notes("raft-partition");
    assert!(!n.contains("SIGSTOP") && !n.contains("replay"), "{n}");
}

/// Push-backs: "no leader" only for require-leader streams; etcd's client counts its lease
/// deadline from the reply, so an etcd page cannot source "count from the send".
#[test]
fn pushbacks_are_true_and_sourced() {
    let p = pushback("raft-partition", "minority member");
    assert!(p.answer.contains("WithRequireLeader"), "{}", p.answer);
    assert!(
        p.answer.contains("\"etcdserver: request timed out\""),
        "{}",
        p.answer
    );
    assert!(!p.answer.contains("answers requests that need a leader"));
    let p = pushback("partition", "lease's deadline");
    assert_ne!(p.source, "etcd docs: lease (keep-alive)");
    assert!(p.source.contains("keep-alive reply"), "{}", p.source);
    assert!(
        p.answer.contains("etcd's own client counts from the reply"),
        "{}",
        p.answer
    );
}

/// Review 4, F1: a write landing on a storage whose failover forgot the newer one is no
/// double charge (one debit shows), and a key in the same database would be lost too.
#[test]
fn r4_storage_failover_off_says_one_debit_shows() {
    let t = run_as("storage-failover", FencingPolicy::Off);
    let i = step_of(&t, |e| {
        matches!(e.kind, EventKind::WriteApplied { .. }) && e.actor.as_deref() == Some("A")
    });
    let s = story::Story::of(&t);
    let (step, say) = (s.narration(i), s.say(i));
    for old in [
        "Double charge",
        "out of token order",
        "storage had already taken it",
    ] {
        assert!(
            !step.contains(old) && !say.contains(old),
            "{old}: {step} / {say}"
        );
    }
    assert!(step.contains("B was granted 34 and storage took its write, then failed over to a standby that never got it: a write from a superseded lease."), "{step}");
    assert_eq!(say, "Job ran twice, yet one debit shows: the failover erased B's acknowledged one. A key kept in the same database would be lost with it.");
    // A plain late write keeps the double-charge line.
    let w = words(&run_as("gc-pause", FencingPolicy::Off)).join("\n");
    assert!(w.contains("Double charge. A key per order"), "{w}");
}

/// Review 4, M1: etcd's new leader extends every lease, so an election is not the trigger.
#[test]
fn r4_renewal_herd_names_no_election() {
    let n = notes("renewal-herd");
    let p = pushback("renewal-herd", "");
    // Review 5: the source's label names no election either.
    assert!(!p.source.contains("election"), "{}", p.source);
    for w in [n.as_str(), p.answer] {
        assert!(!w.contains("election"), "{w}");
        assert!(
            w.contains("an overloaded leader") && w.contains("an fsync stall"),
            "{w}"
        );
    }
}

/// Review 4, U2: etcd's client sends a keep-alive every third of the TTL, unjittered;
/// Redis's watchdog keeps its jitter.
#[test]
fn r4_etcd_keep_alive_has_no_jitter() {
    for t in runs_of("raft-partition") {
        let w = words(&t).join("\n");
        for old in ["watchdog", "jitter"] {
            assert!(!w.contains(old), "{old}: {w}");
        }
        assert!(w.contains("A's etcd client renews its lease (token 33) until t=40; next at t=20 (a third of the TTL)."), "{w}");
        assert!(
            w.contains("A keep-alive every third of the TTL renews the lease by ID"),
            "{w}"
        );
        assert!(notes("raft-partition").contains("A's keep-alive at t=20 reaches member 1"));
    }
    let w = words(&run_as("partition", FencingPolicy::Off)).join("\n");
    assert!(w.contains("A's watchdog renews its lease (value rnd-A, token 33) until t=40; next renewal at t=20 (a third of the TTL, ±25% jitter)."), "{w}");
    assert!(
        w.contains("Renew at about a third of the TTL, jittered"),
        "{w}"
    );
}

/// Review 4, U3: the Say of a ZooKeeper session's end says session, not TTL.
#[test]
fn r4_lock_queue_say_names_the_session() {
    for t in runs_of("lock-queue") {
        let w = words(&t).join("\n");
        assert!(!w.contains("TTL run out"), "{w}");
        assert!(
            w.contains(
                "The lock server sees the session time out, not that the holder is stopped."
            ),
            "{w}"
        );
    }
}

/// Review 4, U1: the pause line says what can follow a check: a pause.
#[test]
fn r4_pause_say_has_a_subject() {
    let w = words(&run_as("gc-pause", FencingPolicy::Off)).join("\n");
    assert!(!w.contains("another can follow the read"), "{w}");
    assert!(w.contains("No warning: a monotonic clock shows a pause only afterwards, and a pause can follow any check."), "{w}");
}

/// Review 4, U4: the scheduler is introduced where it first appears.
#[test]
fn r4_handoff_barrier_introduces_the_scheduler() {
    for t in runs_of("handoff-barrier") {
        let w = words(&t).join("\n");
        let first = w.find("scheduler").expect("no scheduler");
        assert!(
            w[first..].starts_with("scheduler that hands out jobs"),
            "{w}"
        );
    }
}

/// Review 5, U3's rest: a Chubby-style lock's lease is its session's, which times out when
/// no KeepAlive arrives; lock-delay's expiry says so, not that a TTL ran out.
#[test]
fn r5_lock_delay_expiry_names_the_session() {
    for t in runs_of("lock-delay") {
        let i = step_of(&t, |e| matches!(e.kind, EventKind::LeaseExpired { .. }));
        let s = story::Story::of(&t);
        let (narration, say) = (s.narration(i), s.say(i));
        assert!(
            narration.contains("its session timed out on the lock server, with no release, so the lock-delay starts"),
            "{narration}"
        );
        assert_eq!(
            say,
            "The lock server sees the session time out, not that the holder is stopped."
        );
        assert!(!words(&t)
            .iter()
            .any(|w| w.contains("TTL ran out") || w.contains("TTL run out")));
    }
}
