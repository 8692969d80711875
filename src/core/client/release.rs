//! Letting go of the lock: the compare-and-delete, GET-then-DEL's two halves, or a plain DEL.

use super::*;

/// The compare-and-delete, or GET-then-DEL's two halves, or a plain DEL.
pub(super) fn release<B: Backend>(b: &mut B, sc: &Scenario, now: Millis) -> Result<Next, B::Error> {
    match sc.release {
        ReleaseMode::CompareAndDelete => {
            b.state().believes = false;
            let via = ReleaseMode::CompareAndDelete;
            let kind = match b.release(now)? {
                Ok(fence) => EventKind::Released { fence, via },
                Err((reason, deleted)) => EventKind::ReleaseNoop {
                    via,
                    reason,
                    deleted,
                },
            };
            b.say(now, kind);
        }
        ReleaseMode::GetThenDel if !b.state().del_pending => {
            let value = b.read_lock(now)?;
            let mine = value.mine;
            if mine {
                b.state().del_pending = true;
            } else {
                b.state().believes = false;
            }
            let kind = EventKind::LockValueRead {
                owner: value.owner,
                fence: value.fence,
            };
            b.say(now, kind);
            if mine {
                return Ok(Next::Again(now.saturating_add(GET_DEL_GAP)));
            }
        }
        via @ (ReleaseMode::GetThenDel | ReleaseMode::Del) => {
            let st = b.state();
            st.del_pending = false;
            st.believes = false;
            let kind = match b.delete(now)? {
                Some(LockValue {
                    fence, mine: true, ..
                }) => EventKind::Released {
                    fence: fence.unwrap_or(Fence(0)),
                    via,
                },
                Some(LockValue { owner, fence, .. }) => EventKind::DeletedOthersLease {
                    owner: owner.unwrap_or_default(),
                    fence: fence.unwrap_or(Fence(0)),
                },
                None => EventKind::ReleaseNoop {
                    via,
                    reason: NoopReason::Expired,
                    deleted: Vec::new(),
                },
            };
            b.say(now, kind);
        }
    }
    Ok(Next::At(now))
}
