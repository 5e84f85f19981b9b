//! The analytical oracles (tests/oracle) on fixed inputs: values derived by
//! hand, closed forms they must reduce to, the collapse they must show, and
//! for the reader/writer queue a small seeded event simulation of the FCFS
//! discipline the formulas claim to describe.

mod oracle;

use oracle::{RwLoad, TicketChain, ticket_throughput};
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::VecDeque;

fn close(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * want.abs()
}

#[test]
fn one_core_cycles_at_one_over_think_plus_hold() {
    for (a, s, c) in [(100.0, 20.0, 40.0), (1e4, 1.0, 500.0), (5.0, 5.0, 0.0)] {
        let x = ticket_throughput(1, a, s, c);
        assert!(close(x, 1e9 / (a + s), 1e-12), "a={a} s={s} c={c}: {x}");
    }
}

#[test]
fn two_cores_match_the_hand_solved_chain() {
    // a = 100, s = 20, c = 40 ns. Up rates a_0 = 2/a, a_1 = 1/a; down rates
    // 1/s from state 1 and 1/(s + c/2) from state 2. Balance: P1 = P0 (2/a) s
    // = 0.4 P0, P2 = P1 (1/a)(s + c/2) = 0.16 P0, so P0 = 1/1.56, and the
    // throughput P1/s + P2/(s + c/2) = P0 (0.02 + 0.004) per ns.
    let x = ticket_throughput(2, 100.0, 20.0, 40.0);
    let want = 1e9 * 0.024 / 1.56;
    assert!(close(x, want, 1e-12), "{x} vs {want}");
    let chain = TicketChain::new(2, 100.0, 20.0, 40.0);
    let p: Vec<f64> = [1.0, 0.4, 0.16].iter().map(|w| w / 1.56).collect();
    for (got, want) in chain.probs.iter().zip(&p) {
        assert!(close(*got, *want, 1e-12), "{:?} vs {p:?}", chain.probs);
    }
}

#[test]
fn zero_transfer_cost_is_the_machine_repair_model() {
    // c = 0: M/M/1//n, n machines failing at 1/a each, one repairman at 1/s.
    // P0 = 1 / sum_k n!/(n-k)! (s/a)^k, throughput (1 - P0) / s.
    for n in 1..=12usize {
        let (a, s) = (300.0, 25.0);
        let rho = s / a;
        let mut term = 1.0;
        let mut sum = 1.0;
        for k in 1..=n {
            term *= (n - k + 1) as f64 * rho;
            sum += term;
        }
        let want = 1e9 * (1.0 - 1.0 / sum) / s;
        let x = ticket_throughput(n, a, s, 0.0);
        assert!(close(x, want, 1e-10), "n={n}: {x} vs {want}");
    }
}

#[test]
fn throughput_balances_arrivals() {
    // In steady state the lock serves what the idle cores send it:
    // X = (n - E[k]) / a.
    for (n, a, s, c) in [
        (8, 1000.0, 10.0, 200.0),
        (64, 2000.0, 40.0, 100.0),
        (3, 50.0, 50.0, 5.0),
    ] {
        let chain = TicketChain::new(n, a, s, c);
        let arrivals = 1e9 * (n as f64 - chain.mean_contenders()) / a;
        assert!(close(chain.throughput_per_s(), arrivals, 1e-9), "n={n}");
        let total: f64 = chain.probs.iter().sum();
        assert!(close(total, 1.0, 1e-12));
    }
}

#[test]
fn throughput_stays_under_both_bounds_and_transfers_only_cost() {
    for n in [1usize, 2, 4, 16, 64, 256] {
        for (a, s, c) in [
            (1000.0, 10.0, 200.0),
            (100.0, 100.0, 50.0),
            (10.0, 1.0, 1.0),
        ] {
            let x = ticket_throughput(n, a, s, c);
            // The lock serves at most 1/s; the cores ask at most n/(a + s).
            assert!(x <= 1e9 / s * (1.0 + 1e-12), "n={n}: {x}");
            assert!(x <= 1e9 * n as f64 / (a + s) * (1.0 + 1e-12), "n={n}: {x}");
            if n > 1 {
                assert!(x < ticket_throughput(n, a, s, 0.0), "transfers cost, n={n}");
            }
        }
    }
}

#[test]
fn short_sections_with_costly_transfers_collapse() {
    // The paper's shape: throughput rises to a peak at a few cores, then
    // falls with every core added.
    for (a, s, c) in [
        (1000.0, 10.0, 200.0),
        (2000.0, 40.0, 100.0),
        (100.0, 20.0, 40.0),
    ] {
        let x: Vec<f64> = (1..=64).map(|n| ticket_throughput(n, a, s, c)).collect();
        let peak = (0..x.len()).max_by(|&i, &j| x[i].total_cmp(&x[j])).unwrap();
        let cores = peak + 1;
        assert!(cores <= 16, "peak at {cores} cores: {x:?}");
        assert!(
            x[peak..].windows(2).all(|w| w[1] < w[0]),
            "falls after the peak: {x:?}"
        );
        assert!(x[63] < 0.5 * x[peak], "collapses: {} vs {}", x[63], x[peak]);
    }
}

#[test]
fn thousands_of_cores_stay_finite() {
    let x = ticket_throughput(4096, 1000.0, 10.0, 200.0);
    assert!(x.is_finite() && x > 0.0, "{x}");
    // Saturated: nearly always n contenders, served at 1/(s + c (n-1)/2).
    let saturated = 1e9 / (10.0 + 200.0 * 4095.0 / 2.0);
    assert!(close(x, saturated, 0.01), "{x} vs {saturated}");
}

/// What the seeded FCFS reader/writer queue did: mean waits and the
/// time-averaged number of readers inside while the lock was read-held.
struct Observed {
    reader_wait_ns: f64,
    writer_wait_ns: f64,
    inside_while_held: f64,
}

fn exp(rng: &mut Xoshiro256PlusPlus, mean: f64) -> f64 {
    -mean * (1.0 - rng.random::<f64>()).ln()
}

/// A discrete-event run of `arrivals` requests through an FCFS
/// reader/writer lock: the head of the queue enters when it can (a reader
/// while no writer holds, a writer when nobody holds) and nobody passes it.
fn simulate(load: &RwLoad, arrivals: usize, seed: u64) -> Observed {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let (lr, lw) = (1.0 / load.reader_gap_ns, 1.0 / load.writer_gap_ns);
    let warmup = arrivals / 100;
    let mut queue: VecDeque<(bool, f64, usize)> = VecDeque::new();
    let mut holds: Vec<(f64, bool)> = Vec::new();
    let (mut readers_in, mut writer_in) = (0usize, false);
    let (mut now, mut next_arrival) = (0.0, exp(&mut rng, 1.0 / (lr + lw)));
    let mut waits = [(0.0, 0u64), (0.0, 0u64)]; // [reader, writer]: (sum, count)
    let (mut held_time, mut reader_time, mut arrived) = (0.0, 0.0, 0usize);
    while arrived < arrivals {
        let next_release = holds
            .iter()
            .enumerate()
            .min_by(|x, y| x.1.0.total_cmp(&y.1.0))
            .map(|(i, h)| (i, h.0));
        let t = next_release.map_or(next_arrival, |(_, r)| r.min(next_arrival));
        if readers_in > 0 {
            held_time += t - now;
            reader_time += (t - now) * readers_in as f64;
        }
        now = t;
        match next_release {
            Some((i, r)) if r < next_arrival => {
                if holds.swap_remove(i).1 {
                    writer_in = false;
                } else {
                    readers_in -= 1;
                }
            }
            _ => {
                let writer = rng.random::<f64>() < lw / (lr + lw);
                queue.push_back((writer, now, arrived));
                arrived += 1;
                next_arrival = now + exp(&mut rng, 1.0 / (lr + lw));
            }
        }
        while let Some(&(writer, since, id)) = queue.front() {
            let fits = if writer {
                readers_in == 0 && !writer_in
            } else {
                !writer_in
            };
            if !fits {
                break;
            }
            queue.pop_front();
            if id >= warmup {
                let w = &mut waits[usize::from(writer)];
                w.0 += now - since;
                w.1 += 1;
            }
            let hold = if writer {
                load.writer_hold_ns
            } else {
                load.reader_hold_ns
            };
            holds.push((now + exp(&mut rng, hold), writer));
            if writer {
                writer_in = true;
            } else {
                readers_in += 1;
            }
        }
    }
    let mean = |(sum, n): (f64, u64)| if n == 0 { 0.0 } else { sum / n as f64 };
    Observed {
        reader_wait_ns: mean(waits[0]),
        writer_wait_ns: mean(waits[1]),
        inside_while_held: if held_time > 0.0 {
            reader_time / held_time
        } else {
            0.0
        },
    }
}

#[test]
fn writers_alone_are_m_m_1() {
    let load = RwLoad {
        reader_gap_ns: f64::INFINITY,
        writer_gap_ns: 100.0,
        reader_hold_ns: 1.0,
        writer_hold_ns: 50.0,
    };
    // rho = 0.5: W = 0.5 * 50 / 0.5 = 50 ns.
    assert_eq!(load.writers_only_wait_ns(), Some(50.0));
    let seen = simulate(&load, 400_000, 1);
    assert!(
        close(seen.writer_wait_ns, 50.0, 0.10),
        "simulated {}",
        seen.writer_wait_ns
    );
    // Unstable and mixed loads have no such answer.
    assert_eq!(
        RwLoad {
            writer_gap_ns: 50.0,
            ..load
        }
        .writers_only_wait_ns(),
        None
    );
    assert_eq!(
        RwLoad {
            reader_gap_ns: 10.0,
            ..load
        }
        .writers_only_wait_ns(),
        None
    );
}

#[test]
fn low_load_waits_match_the_simulated_fcfs_queue() {
    // Readers 4% busy, writers 1%: first-order reader wait lw sw^2 = 0.4 ns,
    // writer wait lr sr^2 + lw sw^2 = 0.8 + 0.4 = 1.2 ns. Readers that waited
    // for readers, or writers that ignored them, would be 3x off.
    let load = RwLoad {
        reader_gap_ns: 500.0,
        writer_gap_ns: 4000.0,
        reader_hold_ns: 20.0,
        writer_hold_ns: 40.0,
    };
    let (reader, writer) = load.low_load_waits_ns();
    assert!(close(reader, 0.4, 1e-12) && close(writer, 1.2, 1e-12));
    let seen = simulate(&load, 400_000, 7);
    assert!(
        close(seen.reader_wait_ns, reader, 0.12),
        "reader: simulated {} vs {reader}",
        seen.reader_wait_ns
    );
    assert!(
        close(seen.writer_wait_ns, writer, 0.12),
        "writer: simulated {} vs {writer}",
        seen.writer_wait_ns
    );
}

#[test]
fn the_first_order_wait_is_the_m_m_1_wait_as_load_vanishes() {
    for gap in [1e3, 1e4, 1e5] {
        let load = RwLoad {
            reader_gap_ns: f64::INFINITY,
            writer_gap_ns: gap,
            reader_hold_ns: 1.0,
            writer_hold_ns: 10.0,
        };
        let exact = load.writers_only_wait_ns().unwrap();
        let first = load.low_load_waits_ns().1;
        // exact = first / (1 - rho)
        assert!(close(exact, first / (1.0 - 10.0 / gap), 1e-12));
    }
}

#[test]
fn readers_alone_share_the_lock_poisson_many_at_a_time() {
    let load = RwLoad {
        reader_gap_ns: 50.0,
        writer_gap_ns: f64::INFINITY,
        reader_hold_ns: 50.0,
        writer_hold_ns: 1.0,
    };
    // m = 1: 1 / (1 - 1/e) readers inside while read-held.
    let want = 1.0 / (1.0 - (-1.0f64).exp());
    assert!(close(
        load.readers_only_inside_while_held().unwrap(),
        want,
        1e-12
    ));
    let seen = simulate(&load, 300_000, 3);
    assert!(
        close(seen.inside_while_held, want, 0.03),
        "simulated {}",
        seen.inside_while_held
    );
    assert_eq!(seen.reader_wait_ns, 0.0, "readers never wait for readers");
}
