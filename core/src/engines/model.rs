//! The simulation and the judgement of what is left (SPEC §11).

use super::{
    update_kind, wait_kind, DmaIncrement, End, EngineSyncError, Finding, Link, Loc, Options,
    Report, Resource, Step, UpdateKind, WaitEdge, WaitKind, MAX_ENGINES, NUM_SEMAPHORES,
};

const SLOTS: usize = 2 * NUM_SEMAPHORES;

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Ready,
    Blocked,
    Finished,
    Stopped,
}

/// Runs the engines of one subgraph (`engines[e]` is engine `e`'s steps) with the DMA
/// increments `dma`, and reports what it found (SPEC §11).
pub fn analyze(
    engines: &[&[Step]],
    dma: &[DmaIncrement],
    opts: Options,
) -> Result<Report, EngineSyncError> {
    if engines.len() > MAX_ENGINES {
        return Err(EngineSyncError::TooManyEngines {
            found: engines.len(),
            limit: MAX_ENGINES,
        });
    }
    // Per engine, its triggered DMA increments sorted by instruction (DE-5).
    let mut triggered: Vec<Vec<(u32, u32)>> = vec![Vec::new(); engines.len()];
    for (k, d) in dma.iter().enumerate() {
        if let Some((e, i)) = d.trigger {
            let ok = engines
                .get(usize::from(e))
                .is_some_and(|s| (i as usize) < s.len());
            if !ok {
                return Err(EngineSyncError::BadTrigger {
                    dma: k,
                    engine: e,
                    index: i,
                });
            }
            triggered[usize::from(e)].push((i, k as u32));
        }
    }
    for t in &mut triggered {
        t.sort_unstable();
    }
    let mut sim = Sim {
        engines,
        dma,
        opts,
        sem: [0; NUM_SEMAPHORES],
        evt: [false; NUM_SEMAPHORES],
        last: [None; SLOTS],
        waiters: [0; SLOTS],
        reported: [false; SLOTS],
        pc: vec![0; engines.len()],
        cursor: vec![0; engines.len()],
        state: vec![State::Ready; engines.len()],
        ready: if engines.is_empty() {
            0
        } else {
            u64::MAX >> (64 - engines.len())
        },
        triggered,
        findings: Vec::new(),
        links: Vec::new(),
        executed: 0,
    };
    for (k, d) in dma.iter().enumerate() {
        if d.trigger.is_none() {
            sim.dma_fire(k);
        }
    }
    sim.run();
    let findings = std::mem::take(&mut sim.findings);
    let mut report = Report {
        findings,
        ends: Vec::with_capacity(engines.len()),
        semaphores: sim.sem.to_vec(),
        links: std::mem::take(&mut sim.links),
        executed: sim.executed,
    };
    for (e, st) in sim.state.iter().enumerate() {
        let index = sim.pc[e];
        report.ends.push(match st {
            State::Finished => End::Finished,
            State::Stopped => End::Stopped { index },
            State::Blocked | State::Ready => End::Blocked { index },
        });
    }
    // Stops by engine (DE-8, DE-10).
    for (e, st) in sim.state.iter().enumerate() {
        if *st == State::Stopped {
            let i = sim.pc[e];
            let s = engines[e][i as usize];
            let reason = match (wait_kind(s.wait_mode), update_kind(s.update_mode)) {
                (WaitKind::Stop(r), _) | (_, UpdateKind::Stop(r)) => r,
                _ => continue,
            };
            report.findings.push(Finding::AnalysisStopped {
                at: instr(e, i),
                reason,
            });
        }
    }
    if !sim.state.contains(&State::Stopped) {
        sim.judge_blocked(&mut report.findings);
    }
    unconsumed(engines, dma, &mut report.findings);
    Ok(report)
}

fn instr(e: usize, i: u32) -> Loc {
    Loc::Instr {
        engine: e as u16,
        index: i,
    }
}

/// The resource a wait reads.
fn wait_resource(w: WaitKind, idx: u8) -> Option<Resource> {
    match w {
        WaitKind::Sem(_) => Some(Resource::Semaphore(idx)),
        WaitKind::Evt { .. } => Some(Resource::Event(idx)),
        WaitKind::None | WaitKind::Stop(_) => None,
    }
}

/// The resource an update writes.
fn update_resource(u: UpdateKind, idx: u8) -> Option<Resource> {
    match u {
        UpdateKind::EvtSet | UpdateKind::EvtClr => Some(Resource::Event(idx)),
        UpdateKind::Inc
        | UpdateKind::Dec
        | UpdateKind::Add
        | UpdateKind::Sub
        | UpdateKind::Write => Some(Resource::Semaphore(idx)),
        UpdateKind::None | UpdateKind::Stop(_) => None,
    }
}

struct Sim<'a> {
    engines: &'a [&'a [Step]],
    dma: &'a [DmaIncrement],
    opts: Options,
    sem: [u32; NUM_SEMAPHORES],
    evt: [bool; NUM_SEMAPHORES],
    /// The last update of each resource slot.
    last: [Option<Loc>; SLOTS],
    /// Per resource slot, the engines blocked on it (one bit each).
    waiters: [u64; SLOTS],
    /// Per semaphore slot (underflow 0..256, overflow 256..512): reported once (DE-4).
    reported: [bool; SLOTS],
    pc: Vec<u32>,
    cursor: Vec<usize>,
    state: Vec<State>,
    ready: u64,
    triggered: Vec<Vec<(u32, u32)>>,
    findings: Vec<Finding>,
    links: Vec<Link>,
    executed: u64,
}

impl Sim<'_> {
    /// Does engine `e`'s wait `s` hold now?
    #[inline(always)]
    fn holds(&self, w: WaitKind, s: Step) -> bool {
        match w {
            WaitKind::None => true,
            WaitKind::Sem(c) => c.holds(self.sem[usize::from(s.wait_idx)], s.value),
            WaitKind::Evt { set, .. } => self.evt[usize::from(s.wait_idx)] == set,
            WaitKind::Stop(_) => false,
        }
    }

    /// DE-3: the lowest-indexed ready engine runs its next instruction, until none is ready.
    fn run(&mut self) {
        while self.ready != 0 {
            let e = self.ready.trailing_zeros() as usize;
            let bit = 1u64 << e;
            let steps = self.engines[e];
            let i = self.pc[e];
            let Some(&s) = steps.get(i as usize) else {
                self.state[e] = State::Finished;
                self.ready &= !bit;
                continue;
            };
            let w = wait_kind(s.wait_mode);
            let u = update_kind(s.update_mode);
            if matches!(w, WaitKind::Stop(_)) || matches!(u, UpdateKind::Stop(_)) {
                self.state[e] = State::Stopped;
                self.ready &= !bit;
                continue;
            }
            if !self.holds(w, s) {
                if let Some(r) = wait_resource(w, s.wait_idx) {
                    self.waiters[r.slot()] |= bit;
                }
                self.state[e] = State::Blocked;
                self.ready &= !bit;
                continue;
            }
            let at = instr(e, i);
            if let Some(r) = wait_resource(w, s.wait_idx) {
                if self.opts.links {
                    self.links.push(Link {
                        wait: at,
                        by: self.last[r.slot()],
                    });
                }
            }
            if let WaitKind::Evt { set, flip: true } = w {
                self.set_event(s.wait_idx, !set, at);
            }
            match u {
                UpdateKind::EvtSet => self.set_event(s.update_idx, true, at),
                UpdateKind::EvtClr => self.set_event(s.update_idx, false, at),
                UpdateKind::Inc => self.bump(s.update_idx, 1, true, at),
                UpdateKind::Add => self.bump(s.update_idx, s.value, true, at),
                UpdateKind::Dec => self.bump(s.update_idx, 1, false, at),
                UpdateKind::Sub => self.bump(s.update_idx, s.value, false, at),
                UpdateKind::Write => self.write(s.update_idx, s.value, at),
                UpdateKind::None | UpdateKind::Stop(_) => {}
            }
            self.executed += 1;
            // DMA descriptors this instruction starts (DE-5).
            while let Some(&(ti, k)) = self.triggered[e].get(self.cursor[e]) {
                if ti != i {
                    break;
                }
                self.cursor[e] += 1;
                self.dma_fire(k as usize);
            }
            self.pc[e] = i + 1;
        }
    }

    fn dma_fire(&mut self, k: usize) {
        if let Some(d) = self.dma.get(k) {
            self.bump(d.sem, d.by, true, Loc::Dma { index: k as u32 });
        }
    }

    fn set_event(&mut self, idx: u8, set: bool, at: Loc) {
        self.evt[usize::from(idx)] = set;
        self.changed(Resource::Event(idx), at);
    }

    /// Adds (`up`) or subtracts `by`; past a bound, reports it (DE-4) and saturates.
    fn bump(&mut self, idx: u8, by: u32, up: bool, at: Loc) {
        let v = self.sem[usize::from(idx)];
        let new = if up {
            v.checked_add(by)
        } else {
            v.checked_sub(by)
        };
        let new = new.unwrap_or_else(|| {
            self.report_bound(idx, v, by, at, up);
            if up {
                u32::MAX
            } else {
                0
            }
        });
        self.write(idx, new, at);
    }

    fn write(&mut self, idx: u8, value: u32, at: Loc) {
        self.sem[usize::from(idx)] = value;
        self.changed(Resource::Semaphore(idx), at);
    }

    /// The first underflow / overflow of each semaphore (DE-4).
    fn report_bound(&mut self, sem: u8, value: u32, delta: u32, at: Loc, over: bool) {
        let slot = usize::from(sem) + if over { NUM_SEMAPHORES } else { 0 };
        if self.reported[slot] {
            return;
        }
        self.reported[slot] = true;
        let last_update = self.last[usize::from(sem)];
        self.findings.push(if over {
            Finding::SemaphoreOverflow {
                at,
                sem,
                value,
                delta,
                last_update,
            }
        } else {
            Finding::SemaphoreUnderflow {
                at,
                sem,
                value,
                delta,
                last_update,
            }
        });
    }

    /// Records the update and wakes the engines on `r` whose wait now holds.
    fn changed(&mut self, r: Resource, at: Loc) {
        let slot = r.slot();
        self.last[slot] = Some(at);
        let mut w = self.waiters[slot];
        while w != 0 {
            let e = w.trailing_zeros() as usize;
            w &= w - 1;
            let Some(&s) = self.engines[e].get(self.pc[e] as usize) else {
                continue;
            };
            if self.holds(wait_kind(s.wait_mode), s) {
                self.waiters[slot] &= !(1u64 << e);
                self.ready |= 1u64 << e;
                self.state[e] = State::Ready;
            }
        }
    }

    /// DE-6 / DE-7: judges every blocked wait against what remains.
    fn judge_blocked(&self, out: &mut Vec<Finding>) {
        let blocked: Vec<usize> = (0..self.engines.len())
            .filter(|&e| self.state[e] == State::Blocked)
            .collect();
        if blocked.is_empty() {
            return;
        }
        // The resource each blocked engine waits on, and a slot table for them.
        let mut slot_of = [u8::MAX; SLOTS];
        let mut resources: Vec<Resource> = Vec::new();
        let mut waits = Vec::with_capacity(blocked.len());
        for &e in &blocked {
            let Some(&s) = self.engines[e].get(self.pc[e] as usize) else {
                continue;
            };
            let w = wait_kind(s.wait_mode);
            let Some(r) = wait_resource(w, s.wait_idx) else {
                continue;
            };
            if slot_of[r.slot()] == u8::MAX {
                slot_of[r.slot()] = resources.len() as u8;
                resources.push(r);
            }
            waits.push((e, s, w, r));
        }
        // What each blocked engine's remainder does to each of those resources.
        let n = resources.len();
        let mut sums = vec![Remaining::default(); self.engines.len() * n];
        for &f in &blocked {
            let base = f * n;
            let start = self.pc[f];
            for (i, s) in self.engines[f].iter().enumerate().skip(start as usize) {
                let i = i as u32;
                let w = wait_kind(s.wait_mode);
                if let WaitKind::Evt { set, flip: true } = w {
                    let slot = usize::from(slot_of[Resource::Event(s.wait_idx).slot()]);
                    if slot < n {
                        sums[base + slot].event(!set, i);
                    }
                }
                let u = update_kind(s.update_mode);
                if let Some(r) = update_resource(u, s.update_idx) {
                    let slot = usize::from(slot_of[r.slot()]);
                    if slot < n {
                        sums[base + slot].update(u, s.value, i);
                    }
                }
            }
            for &(ti, k) in &self.triggered[f] {
                if ti < start {
                    continue;
                }
                let Some(d) = self.dma.get(k as usize) else {
                    continue;
                };
                let slot = usize::from(slot_of[Resource::Semaphore(d.sem).slot()]);
                if slot < n {
                    sums[base + slot].update(UpdateKind::Add, d.by, ti);
                }
            }
        }
        // Which other engines ever set each waited event (unset_event).
        let mut setters = vec![0u64; n];
        if waits
            .iter()
            .any(|(_, _, w, _)| matches!(w, WaitKind::Evt { set: true, .. }))
        {
            for (f, steps) in self.engines.iter().enumerate() {
                for s in steps.iter() {
                    if let WaitKind::Evt {
                        set: false,
                        flip: true,
                    } = wait_kind(s.wait_mode)
                    {
                        let sl = usize::from(slot_of[Resource::Event(s.wait_idx).slot()]);
                        if sl < n {
                            setters[sl] |= 1 << f;
                        }
                    }
                    if update_kind(s.update_mode) == UpdateKind::EvtSet {
                        let sl = usize::from(slot_of[Resource::Event(s.update_idx).slot()]);
                        if sl < n {
                            setters[sl] |= 1 << f;
                        }
                    }
                }
            }
        }
        // Judge each wait; the satisfiable ones point at their lowest helper.
        let mut next: Vec<Option<(usize, WaitEdge)>> = vec![None; self.engines.len()];
        for &(e, s, w, r) in &waits {
            let slot = usize::from(slot_of[r.slot()]);
            let mut total = Remaining::default();
            let mut helper = None;
            for &f in &blocked {
                if f == e {
                    continue;
                }
                let m = &sums[f * n + slot];
                total.merge(m);
                if helper.is_none() {
                    if let Some(j) = m.first {
                        helper = Some((f, j));
                    }
                }
            }
            let value = match r {
                Resource::Semaphore(i) => self.sem[usize::from(i)],
                Resource::Event(i) => u32::from(self.evt[usize::from(i)]),
            };
            let at = instr(e, self.pc[e]);
            let satisfiable = match w {
                WaitKind::Sem(c) => total.may_reach(value, c, s.value),
                WaitKind::Evt { set, .. } => {
                    if set {
                        total.sets
                    } else {
                        total.clears
                    }
                }
                WaitKind::None | WaitKind::Stop(_) => true,
            };
            let last_update = self.last[r.slot()];
            if !satisfiable {
                let nobody_sets = matches!(w, WaitKind::Evt { set: true, .. })
                    && setters[slot] & !(1u64 << e) == 0;
                out.push(if let (true, Resource::Event(event)) = (nobody_sets, r) {
                    Finding::UnsetEvent {
                        at,
                        event,
                        mode: s.wait_mode,
                        last_update,
                    }
                } else {
                    Finding::UnsatisfiableWait {
                        at,
                        resource: r,
                        mode: s.wait_mode,
                        threshold: s.value,
                        value,
                        last_update,
                    }
                });
            } else if let Some((f, j)) = helper {
                next[e] = Some((
                    f,
                    WaitEdge {
                        waiter: at,
                        resource: r,
                        mode: s.wait_mode,
                        threshold: s.value,
                        value,
                        helper: instr(f, j),
                    },
                ));
            }
        }
        // DE-7: walk the lowest-helper edges from each engine; a revisit closes a cycle.
        let mut seen = vec![false; self.engines.len()];
        let mut cycles: Vec<Vec<WaitEdge>> = Vec::new();
        for &v in &blocked {
            let mut path: Vec<usize> = Vec::new();
            let mut u = v;
            loop {
                if seen[u] {
                    if let Some(p) = path.iter().position(|&x| x == u) {
                        let mut cycle: Vec<WaitEdge> = path[p..]
                            .iter()
                            .filter_map(|&x| next[x].map(|(_, edge)| edge))
                            .collect();
                        let low = (0..cycle.len())
                            .min_by_key(|&k| cycle[k].waiter)
                            .unwrap_or(0);
                        cycle.rotate_left(low);
                        cycles.push(cycle);
                    }
                    break;
                }
                seen[u] = true;
                path.push(u);
                match next[u] {
                    Some((f, _)) => u = f,
                    None => break,
                }
            }
        }
        cycles.sort_by_key(|c| c.first().map(|e| e.waiter));
        out.extend(cycles.into_iter().map(|cycle| Finding::Deadlock { cycle }));
    }
}

/// What an engine's remaining instructions can do to one resource (DE-6).
#[derive(Clone, Copy, Default)]
struct Remaining {
    up: u64,
    down: u64,
    write_min: Option<u32>,
    write_max: Option<u32>,
    sets: bool,
    clears: bool,
    /// The first remaining instruction that updates it.
    first: Option<u32>,
}

impl Remaining {
    fn touch(&mut self, i: u32) {
        self.first = Some(self.first.map_or(i, |f| f.min(i)));
    }

    fn event(&mut self, set: bool, i: u32) {
        if set {
            self.sets = true;
        } else {
            self.clears = true;
        }
        self.touch(i);
    }

    fn update(&mut self, u: UpdateKind, v: u32, i: u32) {
        match u {
            UpdateKind::EvtSet => self.sets = true,
            UpdateKind::EvtClr => self.clears = true,
            UpdateKind::Inc => self.up = self.up.saturating_add(1),
            UpdateKind::Add => self.up = self.up.saturating_add(u64::from(v)),
            UpdateKind::Dec => self.down = self.down.saturating_add(1),
            UpdateKind::Sub => self.down = self.down.saturating_add(u64::from(v)),
            UpdateKind::Write => {
                self.write_min = Some(self.write_min.map_or(v, |m| m.min(v)));
                self.write_max = Some(self.write_max.map_or(v, |m| m.max(v)));
            }
            UpdateKind::None | UpdateKind::Stop(_) => return,
        }
        self.touch(i);
    }

    fn merge(&mut self, o: &Remaining) {
        self.up = self.up.saturating_add(o.up);
        self.down = self.down.saturating_add(o.down);
        for w in [o.write_min, o.write_max].into_iter().flatten() {
            self.write_min = Some(self.write_min.map_or(w, |m| m.min(w)));
            self.write_max = Some(self.write_max.map_or(w, |m| m.max(w)));
        }
        self.sets |= o.sets;
        self.clears |= o.clears;
    }

    /// DE-6: can a semaphore at `value` with these updates still satisfy `cmp threshold`? The
    /// reachable values are taken as the interval from the lowest start (value or a write)
    /// minus every decrement to the highest start plus every increment.
    fn may_reach(&self, value: u32, cmp: super::Cmp, t: u32) -> bool {
        use super::Cmp;
        let v = u64::from(value);
        let hi = v
            .max(self.write_max.map_or(0, u64::from))
            .saturating_add(self.up);
        let lo = v
            .min(self.write_min.map_or(v, u64::from))
            .saturating_sub(self.down);
        let t = u64::from(t);
        match cmp {
            Cmp::Eq => lo <= t && t <= hi,
            Cmp::Lt => lo < t,
            Cmp::Le => lo <= t,
            Cmp::Gt => hi > t,
            Cmp::Ge => hi >= t,
        }
    }
}

/// DE-9: per resource that no wait reads, its first update (instructions by engine and index,
/// then the DMA list); semaphores first, then events.
fn unconsumed(engines: &[&[Step]], dma: &[DmaIncrement], out: &mut Vec<Finding>) {
    let mut read = [false; SLOTS];
    let mut first: [Option<Loc>; SLOTS] = [None; SLOTS];
    for (e, steps) in engines.iter().enumerate() {
        for (i, s) in steps.iter().enumerate() {
            match wait_kind(s.wait_mode) {
                WaitKind::Sem(_) => read[usize::from(s.wait_idx)] = true,
                WaitKind::Evt { .. } => read[NUM_SEMAPHORES + usize::from(s.wait_idx)] = true,
                WaitKind::Stop(super::StopReason::RegisterWait { .. }) => {
                    read[usize::from(s.wait_idx)] = true
                }
                WaitKind::Stop(_) => {
                    read[usize::from(s.wait_idx)] = true;
                    read[NUM_SEMAPHORES + usize::from(s.wait_idx)] = true;
                }
                WaitKind::None => {}
            }
            let u = update_kind(s.update_mode);
            let r = match u {
                UpdateKind::Stop(super::StopReason::RegisterUpdate { .. }) => {
                    Some(Resource::Semaphore(s.update_idx))
                }
                _ => update_resource(u, s.update_idx),
            };
            if let Some(r) = r {
                first[r.slot()].get_or_insert(instr(e, i as u32));
            }
        }
    }
    for (k, d) in dma.iter().enumerate() {
        first[usize::from(d.sem)].get_or_insert(Loc::Dma { index: k as u32 });
    }
    for slot in 0..SLOTS {
        if let (false, Some(at)) = (read[slot], first[slot]) {
            let resource = if slot < NUM_SEMAPHORES {
                Resource::Semaphore(slot as u8)
            } else {
                Resource::Event((slot - NUM_SEMAPHORES) as u8)
            };
            out.push(Finding::UnconsumedUpdate { at, resource });
        }
    }
}
