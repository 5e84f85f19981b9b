//! EEVDF's rules (kernel/sched/fair.c since 6.6, commit 147f3efaa241
//! "sched/fair: Implement an EEVDF-like scheduling policy"), for the
//! profile's `sched.policy = "eevdf"`. All threads have the default weight,
//! so virtual time is CPU time and V, the queue's average, is a plain mean.
//!
//! - A thread is eligible while its virtual runtime is at most V (its lag,
//!   V minus its runtime, is not negative). The next to run is the eligible
//!   thread with the earliest virtual deadline (pick_eevdf).
//! - Each request is `base_slice` long: the deadline is the runtime at the
//!   request's start plus the slice. Past it, the next update of the running
//!   thread (the tick, a wake-up on its CPU) starts a new request and asks
//!   for a reschedule (update_deadline).
//! - RUN_TO_PARITY (on by default): a running thread that is eligible and
//!   short of its deadline keeps its CPU; so a wake-up preempts only a
//!   thread past its deadline, or one that has run ahead of V while the
//!   wakee is the pick (check_preempt_wakeup_fair).
//! - A thread keeps its lag across a sleep (PLACE_LAG), clamped to the
//!   larger of two slices and a tick (update_entity_lag), and rejoins a
//!   queue of n threads at V - lag x (n + 1) / n, so that joining does not
//!   move V by more than its own lag (place_entity); with a fresh request.
//!   An empty queue places it at its reference time. The placement and the
//!   preemption check are one moment (ttwu_do_activate, under the run
//!   queue's lock): a wakee without lag lands at V, where the running
//!   thread still is, and does not preempt it.
//! - sched_yield() first updates the running thread (update_curr), which
//!   starts a new request if the old one is used up; then it forfeits the
//!   rest of an eligible thread's request: its runtime jumps to its
//!   deadline, a slice further on; an ineligible thread's yield changes
//!   nothing more (yield_task_fair after 79104becf42b, 6.18 and the 6.12.y
//!   stable line). The pick that follows counts the yielder as pick_eevdf
//!   counts the current entity: still eligible with the earliest deadline,
//!   it runs on, and no switch happens (the kernel side is in
//!   `Kernel::yield_now`).
//! - DELAY_DEQUEUE (6.12 on): a thread that blocks ahead of V stays in its
//!   queue, counted in V, until the pick meets it (then it leaves with the
//!   lag it has by then, cut to 0 if positive) or it is woken: then it is
//!   runnable again where it is, on that CPU, with a positive lag dropped
//!   (DELAY_ZERO, both ways: no lag is earned while queued asleep). The
//!   kernel's side is in `Kernel::pick_next` and `Kernel::requeue_delayed`.
//!
//! Not modelled: PREEMPT_SHORT and custom slices (every thread has the same
//! one), the NEXT_BUDDY rework, weights (nice levels).

/// Lag a sleeper keeps: V - `vruntime`, within ±max(2 slices, one tick).
pub fn lag(avg: u64, vruntime: u64, base_slice: u64, tick: u64) -> i64 {
    let limit = (2 * base_slice).max(tick) as i64;
    (avg as i64 - vruntime as i64).clamp(-limit, limit)
}

/// Where a waking thread with `lag` joins a queue of `n` threads (the
/// running one counted) whose V is `avg`; `reference` when `n` is 0.
/// Returns (virtual runtime, deadline).
pub fn place(avg: u64, n: usize, reference: u64, lag: i64, base_slice: u64) -> (u64, u64) {
    let vruntime = if n == 0 {
        reference
    } else {
        let scaled = lag as i128 * (n as i128 + 1) / n as i128;
        (avg as i128 - scaled).max(0) as u64
    };
    (vruntime, vruntime + base_slice)
}

/// The running thread's deadline at `vruntime`: a new request once it has
/// reached the old one.
pub fn renew(vruntime: u64, deadline: u64, base_slice: u64) -> u64 {
    if vruntime >= deadline {
        vruntime + base_slice
    } else {
        deadline
    }
}

/// Whether a wake-up preempts the running thread at (`vruntime`,
/// `deadline`) of a queue whose V is `avg`; `wakee_is_pick`: the wakee is
/// the earliest eligible deadline of the waiting threads.
pub fn wakeup_preempts(vruntime: u64, deadline: u64, avg: u64, wakee_is_pick: bool) -> bool {
    vruntime >= deadline || (vruntime > avg && wakee_is_pick)
}

/// At a reschedule, whether the running thread at (`vruntime`, `deadline`,
/// renewed) is still the pick against `best`, the earliest eligible deadline
/// waiting (virtual runtime, deadline).
pub fn keeps_cpu(vruntime: u64, deadline: u64, avg: u64, best: Option<(u64, u64)>) -> bool {
    vruntime <= avg && best.is_none_or(|(_, d)| deadline <= d)
}

/// sched_yield() by a thread at (`vruntime`, `deadline`) of a queue whose V
/// (it counted) is `avg`: (virtual runtime, deadline) after it. The request
/// is renewed first if used up (update_curr's update_deadline); then an
/// eligible thread forfeits the rest of it and an ineligible one keeps
/// both, as yield_task_fair has since 79104becf42b (before it, every yield
/// pushed the deadline a slice on and left the runtime alone).
pub fn yielded(vruntime: u64, deadline: u64, avg: u64, base_slice: u64) -> (u64, u64) {
    let deadline = renew(vruntime, deadline, base_slice);
    if vruntime <= avg {
        (deadline, deadline + base_slice)
    } else {
        (vruntime, deadline)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lag_is_kept_within_two_slices_or_a_tick() {
        assert_eq!(lag(1_000, 400, 100, 250), 250, "a tick is the larger bound");
        assert_eq!(lag(1_000, 950, 100, 50), 50);
        assert_eq!(lag(1_000, 1_900, 300, 50), -600, "two slices bound it");
    }

    #[test]
    fn a_sleeper_rejoins_its_lag_behind_v_scaled_for_the_queue_it_joins() {
        // One thread queued: the lag doubles, so V moves by the lag's half.
        assert_eq!(place(1_000, 1, 7, 100, 300), (800, 1_100));
        assert_eq!(place(1_000, 3, 7, -300, 300), (1_400, 1_700));
        assert_eq!(
            place(1_000, 0, 7, 100, 300),
            (7, 307),
            "empty: the reference"
        );
        assert_eq!(place(50, 1, 7, 100, 300), (0, 300), "never before time 0");
    }

    #[test]
    fn only_a_thread_past_its_deadline_or_ahead_of_v_is_preempted() {
        assert!(wakeup_preempts(500, 500, 1_000, false), "deadline reached");
        assert!(
            !wakeup_preempts(400, 500, 300, false),
            "ahead, wakee not the pick"
        );
        assert!(wakeup_preempts(400, 500, 300, true));
        assert!(
            !wakeup_preempts(200, 500, 300, true),
            "eligible: run to parity"
        );
        assert_eq!(renew(499, 500, 300), 500);
        assert_eq!(renew(500, 500, 300), 800);
    }

    #[test]
    fn the_running_thread_keeps_its_cpu_while_eligible_with_the_earliest_deadline() {
        assert!(keeps_cpu(100, 400, 150, None));
        assert!(keeps_cpu(100, 400, 150, Some((120, 400))));
        assert!(!keeps_cpu(100, 400, 150, Some((120, 390))));
        assert!(!keeps_cpu(200, 400, 150, Some((120, 900))), "not eligible");
    }

    #[test]
    fn an_eligible_yielder_forfeits_the_rest_of_its_request() {
        assert_eq!(yielded(100, 300, 150, 200), (300, 500));
        assert_eq!(
            yielded(200, 300, 150, 200),
            (200, 300),
            "ineligible: nothing changes"
        );
    }

    #[test]
    fn a_yielder_past_its_deadline_forfeits_the_renewed_request() {
        assert_eq!(yielded(350, 300, 400, 200), (550, 750));
        assert_eq!(
            yielded(450, 300, 400, 200),
            (450, 650),
            "ineligible: only the renewal"
        );
    }
}
