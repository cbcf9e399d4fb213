//! Multi-engine programs for the SPEC §11 engine model (`engine_sync`), in its byte form: 2..=6
//! engines whose bands build chains, fan-out, barriers, event hand-offs and DMA-satisfied
//! waits, random member bands, and now and then planted faults (`Builder::plant`). Mode
//! bytes are typed here from FACTS §2, not taken from either implementation.

use super::rng::SplitMix64;
use crate::layout::{UPDATE_MEMBERS, WAIT_MEMBERS};
use crate::subjects::{DmaRow, EngineProgram, FORM_STEPS};

/// FACTS §2 wait and update modes (every member: core's [`WAIT_MEMBERS`], [`UPDATE_MEMBERS`]).
const W_NONE: u8 = 0x00;
const W_GE: u8 = 0x05;
const W_EVT_SET: u8 = 0x06;
const W_SET_THEN_CLEAR: u8 = 0x07;
const U_NONE: u8 = 0x00;
const U_EVT_SET: u8 = 0x11;
const U_INC: u8 = 0x13;
const U_DEC: u8 = 0x14;
const U_ADD: u8 = 0x15;
const U_WR: u8 = 0x19;

fn band(wait: u8, wi: u8, update: u8, ui: u8, value: u32) -> [u8; 8] {
    let v = value.to_le_bytes();
    [wait, wi, update, ui, v[0], v[1], v[2], v[3]]
}

struct Builder {
    p: EngineProgram,
    /// Last semaphore and event taken (a shape takes fresh ones so shapes do not interfere).
    sem: u8,
    evt: u8,
}

fn fresh(c: &mut u8) -> u8 {
    *c = c.wrapping_add(1);
    *c
}

impl Builder {
    fn push(&mut self, e: usize, b: [u8; 8]) -> u32 {
        let steps = &mut self.p.engines[e];
        steps.push(b);
        (steps.len() - 1) as u32
    }

    fn filler(&mut self, r: &mut SplitMix64, e: usize) {
        for _ in 0..r.index(2) {
            self.push(e, band(W_NONE, 0, U_NONE, 0, r.below(4) as u32));
        }
    }

    /// A chain through the engines in turn: each waits for the previous one's count.
    fn chain(&mut self, r: &mut SplitMix64) {
        let n = self.p.engines.len();
        let hops = 1 + r.index(n);
        let mut prev: Option<(u8, u32)> = None;
        let start = r.index(n);
        for h in 0..=hops {
            let e = (start + h) % n;
            let s = fresh(&mut self.sem);
            let by = 1 + r.below(3) as u32;
            let (w, wi, t) = prev.map_or((W_NONE, 0, 0), |(ps, pt)| (W_GE, ps, pt));
            // An ADD_IMM carries the threshold as its immediate too (one u32, FACTS §2):
            // increment instead when waiting.
            let (u, val) = if w == W_NONE && by > 1 {
                (U_ADD, by)
            } else {
                (U_INC, t)
            };
            self.filler(r, e);
            self.push(e, band(w, wi, u, s, val));
            prev = Some((s, if u == U_ADD { by } else { 1 }));
        }
    }

    /// One producer, several consumers of one count.
    fn fan_out(&mut self, r: &mut SplitMix64) {
        let n = self.p.engines.len();
        let s = fresh(&mut self.sem);
        let producer = r.index(n);
        let k = 1 + r.below(3) as u32;
        for _ in 0..k {
            self.push(producer, band(W_NONE, 0, U_INC, s, 0));
        }
        for e in (0..n).filter(|&e| e != producer) {
            self.filler(r, e);
            self.push(
                e,
                band(W_GE, s, U_NONE, 0, 1 + r.below(u64::from(k)) as u32),
            );
        }
    }

    /// Every engine arrives, then waits for all.
    fn barrier(&mut self, r: &mut SplitMix64) {
        let n = self.p.engines.len();
        let s = fresh(&mut self.sem);
        for e in 0..n {
            self.filler(r, e);
            self.push(e, band(W_NONE, 0, U_INC, s, 0));
        }
        for e in 0..n {
            self.push(e, band(W_GE, s, U_NONE, 0, n as u32));
        }
    }

    /// An event set by one engine and consumed by another.
    fn events(&mut self, r: &mut SplitMix64) {
        let n = self.p.engines.len();
        let ev = fresh(&mut self.evt);
        let a = r.index(n);
        let b = (a + 1 + r.index(n - 1)) % n;
        self.push(a, band(W_NONE, 0, U_EVT_SET, ev, 0));
        let w = [W_EVT_SET, W_SET_THEN_CLEAR][r.index(2)];
        self.push(b, band(w, ev, U_NONE, 0, 0));
    }

    /// A wait only a DMA increment satisfies (FACTS §10 D5), started before the run or by one.
    fn dma(&mut self, r: &mut SplitMix64) {
        let n = self.p.engines.len();
        let s = fresh(&mut self.sem);
        let waiter = r.index(n);
        let by = [1u32, 2, 16][r.index(3)];
        let trigger = if r.below(2) == 0 {
            None
        } else {
            let t = (waiter + 1 + r.index(n - 1)) % n;
            let i = self.push(t, band(W_NONE, 0, U_NONE, 0, 0));
            Some((t as u16, i))
        };
        self.p.dma.push(DmaRow {
            sem: s,
            by,
            trigger,
        });
        self.push(waiter, band(W_GE, s, U_NONE, 0, by));
    }

    /// Bands of random members on indices 0..3.
    fn random(&mut self, r: &mut SplitMix64) {
        let n = self.p.engines.len();
        for _ in 0..1 + r.index(6) {
            let e = r.index(n);
            let w = if r.below(3) == 0 {
                r.pick(&WAIT_MEMBERS)
            } else {
                W_NONE
            };
            let u = r.pick(&UPDATE_MEMBERS);
            let v = [0u32, 1, 2, 3, u32::MAX][r.index(5)];
            self.push(e, band(w, r.below(3) as u8, u, r.below(3) as u8, v));
        }
    }

    /// `a` and `b` each wait for what the other does next.
    fn crossed(&mut self, a: usize, b: usize) {
        let (s, t) = (fresh(&mut self.sem), fresh(&mut self.sem));
        self.push(a, band(W_GE, s, U_NONE, 0, 1));
        self.push(a, band(W_NONE, 0, U_INC, t, 0));
        self.push(b, band(W_GE, t, U_NONE, 0, 1));
        self.push(b, band(W_NONE, 0, U_INC, s, 0));
    }

    /// Plants fault `what` (0..9; 8: none).
    fn plant(&mut self, r: &mut SplitMix64, what: u64) {
        let n = self.p.engines.len();
        let a = r.index(n);
        let b = (a + 1 + r.index(n - 1)) % n;
        match what {
            // A deadlock.
            0 => self.crossed(a, b),
            // A deadlock beside an unsatisfiable wait.
            1 => {
                self.crossed(a, b);
                // A third engine waits for a count nobody makes.
                if n >= 3 {
                    let c = (0..n).find(|&c| c != a && c != b).unwrap_or(a);
                    let s = fresh(&mut self.sem);
                    self.push(c, band(W_GE, s, U_NONE, 0, 1));
                }
            }
            // An unsatisfiable wait.
            2 => {
                let s = fresh(&mut self.sem);
                let k = 1 + r.below(3) as u32;
                for _ in 0..k {
                    self.push(b, band(W_NONE, 0, U_INC, s, 0));
                }
                self.push(a, band(W_GE, s, U_NONE, 0, k + 1));
            }
            // A wait for an event nobody sets.
            3 => {
                let ev = fresh(&mut self.evt);
                self.push(a, band(W_EVT_SET, ev, U_NONE, 0, 0));
            }
            // An underflow.
            4 => {
                let s = fresh(&mut self.sem);
                self.push(a, band(W_NONE, 0, U_DEC, s, 0));
                self.push(b, band(W_GE, s, U_NONE, 0, 0));
            }
            // An overflow.
            5 => {
                let s = fresh(&mut self.sem);
                self.push(a, band(W_NONE, 0, U_WR, s, u32::MAX));
                self.push(a, band(W_NONE, 0, U_INC, s, 0));
                self.push(b, band(W_GE, s, U_NONE, 0, 1));
            }
            // An update nobody waits for.
            6 => {
                let s = fresh(&mut self.sem);
                self.push(a, band(W_NONE, 0, U_INC, s, 0));
            }
            // A register wait or an unknown mode byte.
            7 => {
                let b = match r.index(3) {
                    0 => band(0x85, self.sem, U_NONE, 0, 1),
                    1 => band(W_NONE, 0, 0x99, self.sem, 0),
                    _ => band(0x08 + r.below(4) as u8, 0, r.byte() | 0x20, 0, 0),
                };
                self.push(a, b);
            }
            _ => {}
        }
    }
}

pub fn program_into(r: &mut SplitMix64, out: &mut Vec<u8>) {
    let n = 2 + r.index(5);
    let mut b = Builder {
        p: EngineProgram {
            engines: vec![Vec::new(); n],
            dma: Vec::new(),
        },
        sem: r.byte() % 8,
        evt: r.byte() % 8,
    };
    for _ in 0..1 + r.index(3) {
        match r.below(6) {
            0 => b.chain(r),
            1 => b.fan_out(r),
            2 => b.barrier(r),
            3 => b.events(r),
            4 => b.dma(r),
            _ => b.random(r),
        }
    }
    // Up to two faults (a deadlock beside an unsatisfiable wait, say).
    for _ in 0..[0, 1, 1, 2][r.index(4)] {
        let what = r.below(9);
        b.plant(r, what);
    }
    for steps in &mut b.p.engines {
        steps.truncate(FORM_STEPS);
    }
    b.p.dma.retain(|d| {
        d.trigger
            .is_none_or(|(e, i)| (i as usize) < FORM_STEPS && usize::from(e) < n)
    });
    b.p.dma.truncate(crate::subjects::FORM_DMAS);
    if r.below(4) == 0 {
        // Near-valid: a few bands' wait or update byte replaced.
        for _ in 0..1 + r.index(2) {
            let e = r.index(n);
            if let Some(s) = b.p.engines[e].get_mut(r.index(FORM_STEPS)) {
                let at = [0usize, 2, 1, 3][r.index(4)];
                s[at] = r.byte();
            }
        }
    }
    out.clear();
    out.extend_from_slice(&b.p.to_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_form_round_trips() {
        let mut r = SplitMix64(0x34);
        let mut bytes = Vec::new();
        for _ in 0..500 {
            program_into(&mut r, &mut bytes);
            let p = EngineProgram::from_bytes(&bytes);
            assert_eq!(p.to_bytes(), bytes);
            assert!((2..=6).contains(&p.engines.len()));
        }
    }
}
