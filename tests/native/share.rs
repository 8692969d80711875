//! The shareable URL: every valid view round-trips through the hash, and no input at all
//! makes the decoder panic.

use fencing_lab::core::{FencingPolicy, Pause, DECK};
use fencing_lab::share::{decode, encode, encode_view, View, MAX_HASH_LEN};
use proptest::prelude::*;

fn policy() -> impl Strategy<Value = FencingPolicy> {
    prop_oneof![
        Just(FencingPolicy::Off),
        Just(FencingPolicy::Strict),
        Just(FencingPolicy::SameEpoch)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    /// Any view a user can reach from a deck entry by editing its parameters comes back exactly.
    #[test]
    fn hash_round_trips(
        entry in 0..DECK.len(),
        policy in policy(),
        ttl in 1u64..=2_000,
        pause in (0u64..=1_000, 1u64..=1_000),
        delay in 0u64..=500,
        step in 0usize..=10_000,
        edit_delay in any::<bool>(),
        embed in any::<bool>(),
    ) {
        let mut sc = (DECK[entry].build)();
        sc.policy = policy;
        sc.lease_ttl = ttl;
        let horizon = sc.horizon;
        for i in 0..sc.actors.len() {
            if !sc.actors[i].pauses.is_empty() {
                let start = pause.0 % horizon;
                let duration = 1 + pause.1 % (horizon - start).max(1);
                let duration = duration.min(horizon - start).max(1);
                if start + duration <= horizon {
                    sc = sc.with_pause(i, Pause { start, duration });
                }
            }
        }
        if edit_delay {
            sc.actors[0].network_delay = delay;
        }
        prop_assume!(sc.validate().is_ok());
        let hash = encode_view(&sc, step, embed);
        prop_assert_eq!(decode(&hash), Ok(View { scenario: sc, step, embed }), "{}", hash);
    }

    /// Arbitrary text never panics and either loads a valid scenario or explains why not.
    #[test]
    fn arbitrary_text_never_panics(hash in ".{0,300}") {
        if let Ok(view) = decode(&hash) {
            prop_assert!(view.scenario.validate().is_ok());
        }
    }

    /// Near-miss hashes built from the real vocabulary (the likeliest hostile or mangled links).
    #[test]
    fn mangled_links_never_panic(parts in prop::collection::vec(
        prop_oneof![
            Just("s=gc-pause".to_owned()),
            Just("s=".to_owned()),
            "s=[a-z-]{0,12}",
            "fence=[a-z_]{0,12}",
            "ttl=[0-9]{0,25}",
            "step=[0-9-]{0,25}",
            "pause\\.[A-Z]{0,2}=[0-9]{0,8},?[0-9]{0,8}",
            "delay\\.[A-Z]{0,2}=[0-9,]{0,12}",
            Just("embed".to_owned()),
            "embed=[a-z0-9]{0,3}",
            "[a-z.=,&#]{0,10}",
        ],
        0..12,
    )) {
        let hash = format!("#{}", parts.join("&"));
        match decode(&hash) {
            Ok(view) => prop_assert!(view.scenario.validate().is_ok()),
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }
}

#[test]
fn every_deck_entry_has_a_link() {
    for entry in DECK {
        let sc = (entry.build)();
        let hash = encode(&sc, 3);
        assert!(hash.starts_with(&format!("#s={}&", entry.id)), "{hash}");
        assert_eq!(decode(&hash).unwrap().scenario, sc, "{}", entry.id);
    }
}

#[test]
fn oversized_link_is_refused() {
    let long = format!("#s=gc-pause&{}", "x=1&".repeat(MAX_HASH_LEN));
    assert!(decode(&long)
        .unwrap_err()
        .to_string()
        .contains("characters long"));
}

/// The random-value token source (`uuid-token`, or any scenario's What if…) is kept in the
/// hash both ways, and a bad value names the choices.
#[test]
fn the_random_token_source_round_trips() {
    use fencing_lab::core::{LockKind, RedisTokens, Scenario};
    let sc = Scenario::uuid_token();
    let hash = encode(&sc, 7);
    assert!(!hash.contains("tokens="), "the deck's own source: {hash}");
    assert_eq!(
        decode(&hash),
        Ok(View {
            scenario: sc.clone(),
            step: 7,
            embed: false,
        })
    );
    // What if… a counter instead: kept, and back.
    let counted = Scenario {
        lock: LockKind::default(),
        ..sc
    };
    let hash = encode(&counted, 0);
    assert!(hash.contains("&tokens=same_redis"), "{hash}");
    assert_eq!(decode(&hash).map(|v| v.scenario), Ok(counted));
    // Random values on the headline.
    let headline = Scenario {
        lock: LockKind::Redis {
            tokens: RedisTokens::RandomValue,
        },
        ..Scenario::gc_pause()
    };
    let hash = encode(&headline, 0);
    assert!(hash.contains("&tokens=random"), "{hash}");
    assert_eq!(decode(&hash).map(|v| v.scenario), Ok(headline));
    let bad = decode("#s=uuid-token&tokens=uuid").unwrap_err().to_string();
    assert_eq!(
        bad,
        "tokens must be same_redis, separate_counter, random or lock_service, not “uuid”"
    );
}

/// The words a message may not hold: Rust's, not a user's.
const RUST: [&str; 6] = ["..=", "Some(", "Err(", "Ok(", "{", "}"];

/// Every number a link can carry, at every edge of its range and with every kind of bad
/// value: inside is loaded, and anything else is refused with a sentence that names the
/// setting as the page does and says its range in ms / s / minutes. A setting's range is
/// its row of `BOUNDS`; an old link's per-fault key's is its fault kind's row's.
#[test]
fn every_number_in_a_link_says_its_range() {
    use fencing_lab::core::fault::shape_named;
    use fencing_lab::core::MAX_TIME;
    use fencing_lab::lab::{Setting, Unit, BOUNDS};
    let horizon = fencing_lab::core::deck::find("redis-failover")
        .map(|e| (e.build)().horizon)
        .expect("redis-failover");
    /// How a number's text past its largest is refused: with its range, or (a span) with
    /// where the span must end.
    #[derive(PartialEq)]
    enum Over {
        Range,
        Pause,
        Cut,
    }
    // The link that sets it (`{}` is the value), its label, its least, its largest value
    // there (a moment or a span on the timeline ends by its end: t=100 but for the
    // failover's), and what it counts.
    let mut numbers = Vec::new();
    for bound in BOUNDS {
        let (link, label, max) = match bound.setting {
            Setting::Ttl => ("#s=gc-pause&ttl={}", "Lease TTL", MAX_TIME),
            Setting::Clients => ("#s=gc-pause&clients={}", "Clients", 5),
            Setting::LockDelay => ("#s=lock-delay&lockdelay={}", "Lock-delay", MAX_TIME),
            Setting::LockRtt => (
                "#s=cross-region&rtt={}",
                "Lock service round trip",
                MAX_TIME,
            ),
            Setting::Drift => ("#s=drift-margin&drift={}", "Client clock drift", 900),
            Setting::Margin => ("#s=drift-margin&margin={}", "Deadline margin", MAX_TIME),
            Setting::PauseStart => ("#s=gc-pause&pause.A={},10", "A pause start", 90),
            Setting::PauseLength => ("#s=gc-pause&pause.A=0,{}", "A pause length", 100),
            Setting::LockTimeout => ("#s=partition&locktimeout.A={}", "A lock timeout", MAX_TIME),
            Setting::Delay => ("#s=delayed-packet&delay.A={}", "A network delay", MAX_TIME),
        };
        let over = match bound.setting {
            Setting::PauseStart | Setting::PauseLength => Over::Pause,
            _ => Over::Range,
        };
        numbers.push((link, label, bound.min, max, bound.unit, over));
    }
    let failover = shape_named("failover").expect("failover");
    let partition = shape_named("partition").expect("partition");
    let lag = failover.fields.iter().find(|f| f.name == "lag");
    let lag = lag.and_then(|f| f.range).expect("a failover's lag");
    numbers.extend([
        (
            "#s=redis-failover&failover={}",
            "Failover at",
            failover.at.least,
            horizon,
            Unit::Instant,
            Over::Range,
        ),
        (
            "#s=redis-failover&lag={}",
            "Replica lag",
            lag.least,
            MAX_TIME,
            Unit::Duration,
            Over::Range,
        ),
        (
            "#s=partition&partition.A={},10",
            "A partition start",
            partition.at.least,
            90,
            Unit::Instant,
            Over::Cut,
        ),
        (
            "#s=partition&partition.A=0,{}",
            "A partition length",
            1,
            100,
            Unit::Duration,
            Over::Cut,
        ),
    ]);
    for (link, label, min, max, unit, over) in numbers {
        let with = |v: &str| link.replace("{}", v);
        let (unit, low, high) = match unit {
            Unit::Count => ("", "too few", "too many"),
            Unit::PerMille => (" per mille", "too little", "too much"),
            Unit::Instant => (" ms", "too early", "too late"),
            Unit::Duration => (" ms", "too short", "too long"),
        };
        let human = |n: u64| match (n, unit) {
            (MAX_TIME, " ms") => "10 minutes".to_owned(),
            _ => format!("{n}{unit}"),
        };
        for good in [min, max] {
            let hash = with(&good.to_string());
            assert!(decode(&hash).is_ok(), "{hash}: {:?}", decode(&hash));
        }
        let mut bad = vec![
            ("2.5".to_owned(), "“2.5” is not a whole number".to_owned()),
            ("-5".to_owned(), "-5 is negative".to_owned()),
            (String::new(), "the value is empty".to_owned()),
            (
                "99999999999999999999".to_owned(),
                format!("9999999999999999…{unit} is {high}"),
            ),
        ];
        if min > 0 {
            bad.push((
                format!("{}", min - 1),
                format!("{}{unit} is {low}", min - 1),
            ));
        }
        // Past the timeline's end a span says where it must end (`tests` below has them).
        let over_text = (max + 1).to_string();
        if over == Over::Pause {
            let said = decode(&with(&over_text)).unwrap_err().to_string();
            assert_eq!(
                said,
                "A's pause must end by t=100 ms, the end of the timeline (it would end at 101 ms)"
            );
        } else if over == Over::Cut {
            let said = decode(&with(&over_text)).unwrap_err().to_string();
            assert_eq!(
                said,
                "A's partition must end by t=100 ms, the end of the timeline"
            );
        } else {
            bad.push((over_text.clone(), format!("{over_text}{unit} is {high}")));
        }
        // A span's largest start or length depends on the other, which may not read: its
        // text is checked against the setting's own range, and its end against the timeline.
        let range = if over == Over::Range {
            format!(
                "{label} must be between {} and {} (",
                human(min),
                human(max)
            )
        } else {
            format!("{label} must be between {} and 10 minutes (", human(min))
        };
        for (value, why) in bad {
            let hash = with(&value);
            let said = decode(&hash).expect_err(&hash).to_string();
            assert!(said.starts_with(&range), "{hash}: {said}");
            assert!(said.contains(&format!("({why}")), "{hash}: {said}");
            assert!(!RUST.iter().any(|r| said.contains(r)), "{hash}: {said}");
        }
    }
}

/// Broken links, each with the exact sentence the page shows over the headline.
pub const BROKEN_LINKS: [(&str, &str); 24] = [
    ("#s=gc-pause&ttl", "“ttl” has no value: a link's settings are written key=value, e.g. ttl=30"),
    ("#fence=off&step=3", "the link names no scenario (it starts s=…, e.g. s=gc-pause)"),
    ("#s=gc-pause&s=toctou", "“s” is given twice"),
    ("#s=nope&step=3", "there is no scenario called “nope”"),
    ("#s=gc-pause&colour=red", "a link has no setting called “colour”"),
    ("#s=gc-pause&pause.Z=1,2", "“gc-pause” has no client called “Z”"),
    ("#s=gc-pause&fence=maybe", "fencing must be off, strict or same_epoch, not “maybe”"),
    ("#s=<script>alert(1)</script>", "a link cannot contain “<”"),
    ("#s=%3Cscript%3Ealert(1)%3C/script%3E", "a link cannot contain “<”"),
    ("#%3Cimg%20src=x%20onerror=alert(1)%3E", "a link cannot contain “<”"),
    ("#s=gc-pause&ttl=3%200", "a link cannot contain a space"),
    ("#s=gc-pause&ttl=%0A", "a link cannot contain the invisible character U+000A"),
    ("#s=gc-pause&ttl=%3", "the link has a broken escape: a % in a link is followed by two hex digits"),
    ("#s=gc-pause&ttl=%zz30", "the link has a broken escape: a % in a link is followed by two hex digits"),
    ("#s=caf%C3%A9", "a link holds only the letters a-z and A-Z, digits and - _ . , = &"),
    ("#s=gc-pause&ttl=0", "Lease TTL must be between 1 ms and 10 minutes (0 ms is too short)"),
    ("#s=gc-pause&ttl=-5", "Lease TTL must be between 1 ms and 10 minutes (-5 is negative)"),
    ("#s=gc-pause&ttl=99999999999999999999", "Lease TTL must be between 1 ms and 10 minutes (9999999999999999… ms is too long)"),
    ("#s=gc-pause&pause.A=90,50", "A's pause must end by t=100 ms, the end of the timeline (it would end at 140 ms)"),
    ("#s=gc-pause&pause.A=5", "“pause.A” needs start,length in ms, e.g. pause.A=5,50 (or none)"),
    ("#s=gc-pause&step=soon", "the step must be a whole number, not “soon”"),
    ("#s=row-lock&failover=5", "the link's scenario is not valid: a row lock in PostgreSQL has no lock server to fail over: the lock is the database's own"),
    ("#s=row-lock&lockdelay=5", "a row lock in PostgreSQL has no lock-delay"),
    ("#s=gc-pause&lockdelay=20", "Redis has no lock-delay: a lock service (tokens from etcd / ZooKeeper) has one"),
];

/// Each broken link gets its own sentence, in the user's terms: what the user wrote (not
/// the browser's `%`-escapes), no Rust, and the page says what it shows instead.
#[test]
fn broken_links_say_what_is_wrong_in_the_users_words() {
    use fencing_lab::share::not_loaded;
    for (hash, want) in BROKEN_LINKS {
        let e = decode(hash).expect_err(hash);
        assert_eq!(e.to_string(), want, "{hash}");
        assert!(!RUST.iter().any(|r| want.contains(r)), "{want}");
        assert_eq!(
            not_loaded(&e),
            format!("This link cannot be loaded: {want}; showing the headline instead.")
        );
    }
    let long = format!("#s=gc-pause&step={}", "9".repeat(MAX_HASH_LEN));
    assert_eq!(
        decode(&long).unwrap_err().to_string(),
        format!(
            "a link can be at most 2000 characters long, and this one has {}",
            long.len() - 1
        )
    );
    // Escapes the browser adds to what a link may hold read as the characters themselves.
    assert_eq!(
        decode("#s=gc%2Dpause&ttl=%34%35")
            .unwrap()
            .scenario
            .lease_ttl,
        45
    );
}

/// docs/messages.md's table is what the page says: each field row typed into that field of
/// that deck entry, each link row opened.
#[test]
fn the_messages_page_is_what_the_page_says() {
    use fencing_lab::lab::{Lab, Msg, Param};
    use fencing_lab::share::not_loaded;
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/messages.md"))
        .expect("docs/messages.md");
    let rows: Vec<Vec<&str>> = page
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| entry"))
        .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
        .collect();
    assert!(rows.len() >= 60, "{} rows", rows.len());
    for row in rows {
        let [entry, field, typed, says] = row[..] else {
            panic!("{row:?}")
        };
        let typed = match typed {
            "(empty)" => "",
            t => t.trim_matches('`'),
        };
        let said = if entry == "link" {
            decode(typed).err().map(|e| not_loaded(&e))
        } else {
            let sc = fencing_lab::core::deck::find(entry)
                .map(|e| (e.build)())
                .unwrap_or_else(|| panic!("{entry}"));
            let (code, client) = field.split_once('.').unwrap_or((field, ""));
            let param = Param::from_code(code).unwrap_or_else(|| panic!("{field}"));
            let actor = sc.actor_index(client);
            let mut lab = Lab::new(sc);
            lab.update(Msg::Field {
                param,
                actor,
                text: typed.to_owned(),
            });
            lab.error().map(str::to_owned)
        };
        let want = (says != "(taken)").then(|| says.to_owned());
        assert_eq!(said, want, "{entry} {field} {typed}");
    }
}
