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
    use fencing_lab::core::{Scenario, TokenSource};
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
        token_source: TokenSource::SameRedis,
        ..sc
    };
    let hash = encode(&counted, 0);
    assert!(hash.contains("&tokens=same_redis"), "{hash}");
    assert_eq!(decode(&hash).map(|v| v.scenario), Ok(counted));
    // Random values on the headline.
    let headline = Scenario {
        token_source: TokenSource::RandomValue,
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
