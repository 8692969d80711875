//! Letting go of the lock: the compare-and-delete, GET-then-DEL's two halves, or a plain DEL.

use super::*;

/// The compare-and-delete, or GET-then-DEL's two halves, or a plain DEL.
pub(super) fn release<B: Backend>(b: &mut B, sc: &Scenario, now: Millis) -> Result<Next, B::Error> {
    match sc.release {
        ReleaseMode::CompareAndDelete => {
            b.state().believes = false;
            let via = ReleaseMode::CompareAndDelete;
            match b.release(now)? {
                Ok(fence) => b.say(now, EventKind::Released { fence, via }),
                Err((reason, deleted)) => {
                    let seen = Seen::ReleaseNoop {
                        deleted: deleted.clone(),
                    };
                    let event = |reason| EventKind::ReleaseNoop {
                        via,
                        reason,
                        deleted,
                    };
                    b.say_told(now, reason, event, seen);
                }
            }
        }
        ReleaseMode::GetThenDel if !b.state().del_pending => {
            let value = b.read_lock(now)?;
            let mine = matches!(value, KeyValue::Own { .. });
            if mine {
                b.state().del_pending = true;
            } else {
                b.state().believes = false;
            }
            read(b, now, value);
            if mine {
                return Ok(Next::Again(now.saturating_add(GET_DEL_GAP)));
            }
        }
        via @ (ReleaseMode::GetThenDel | ReleaseMode::Del) => {
            let st = b.state();
            st.del_pending = false;
            st.believes = false;
            match b.delete(now)? {
                KeyValue::Own { fence, .. } => b.say(now, EventKind::Released { fence, via }),
                KeyValue::Others { owner, fence } => {
                    let seen = Seen::DeletedOthersLease {
                        owner: owner.clone(),
                    };
                    let event = |fence| EventKind::DeletedOthersLease { owner, fence };
                    b.say_told(now, fence, event, seen);
                }
                // The DEL found no key: the lease had run out.
                KeyValue::Empty => {
                    let kind = EventKind::ReleaseNoop {
                        via,
                        reason: NoopReason::Expired,
                        deleted: Vec::new(),
                    };
                    b.say(now, kind);
                }
            }
        }
    }
    Ok(Next::At(now))
}

/// Says what GET-then-DEL's GET read: the key's owner and, as far as the backend tells,
/// that lease's token.
fn read<B: Backend>(b: &mut B, now: Millis, value: KeyValue<B::Told<Fence>>) {
    match value {
        KeyValue::Empty => {
            let kind = EventKind::LockValueRead {
                owner: None,
                fence: None,
            };
            b.say(now, kind);
        }
        KeyValue::Own { owner, fence } => {
            let kind = EventKind::LockValueRead {
                owner: Some(owner),
                fence: Some(fence),
            };
            b.say(now, kind);
        }
        KeyValue::Others { owner, fence } => {
            let seen = Seen::LockValueRead {
                owner: owner.clone(),
            };
            let event = |fence| EventKind::LockValueRead {
                owner: Some(owner),
                fence: Some(fence),
            };
            b.say_told(now, fence, event, seen);
        }
    }
}
