//! The figures `rmap-storm inspect` prints about a world.

use super::ids::AnonVmaId;
use super::sizes::{ObjectSize, object_sizes};
use super::world::World;
use rayon::prelude::*;
use serde::Serialize;

/// What a world holds and what walking it costs. Field order is the order
/// `inspect` prints them; the JSON keys are the field names.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorldStats {
    /// Live tasks (mms).
    pub tasks: u64,
    pub vmas: u64,
    pub anon_vmas: u64,
    /// anon_vma_chains.
    pub avcs: u64,
    /// Resident pages (anon and page cache).
    pub pages: u64,
    /// AVCs in the largest anon_vma tree.
    pub max_tree_avcs: u64,
    /// anon_vmas on the longest root-to-leaf parent path (a root alone is 1).
    pub hierarchy_depth: u64,
    /// vmas visited by page_referenced, mean over every resident page.
    pub walk_vmas_mean: f64,
    /// vmas visited by page_referenced, worst page.
    pub walk_vmas_max: u64,
    /// vmas visited by page_referenced, mean over the pages mapped by more
    /// than one PTE (an AIM7 ancestor's COW-shared pages); 0 if none.
    pub walk_vmas_mean_shared: f64,
    /// AVC arena bytes (capacity, tree links inside each node, slab tag
    /// included) per AVC.
    pub bytes_per_avc: f64,
    /// Bytes held by every arena and table of the world (capacity).
    pub resident_bytes: u64,
    /// One object of each kind in the model beside the kernel's.
    pub sizes: Vec<ObjectSize>,
    /// Wall time to build the world, milliseconds.
    pub build_ms: f64,
}

impl World {
    /// The world's figures. Runs page_referenced once on every resident page
    /// (no sampling, in parallel), so it clears every young bit, as one
    /// reclaim pass would.
    pub fn stats(&self, build_ms: f64) -> WorldStats {
        let mut s = WorldStats {
            tasks: 0,
            vmas: 0,
            anon_vmas: 0,
            avcs: 0,
            pages: u64::from(self.pages.live()),
            max_tree_avcs: 0,
            hierarchy_depth: 0,
            walk_vmas_mean: 0.0,
            walk_vmas_max: 0,
            walk_vmas_mean_shared: 0.0,
            bytes_per_avc: 0.0,
            resident_bytes: self.resident_bytes() as u64,
            sizes: object_sizes(),
            build_ms,
        };
        for (_, mm) in self.live_mms() {
            s.tasks += 1;
            s.vmas += mm.vmas().len() as u64;
        }
        let mut avc_bytes = 0;
        for (_, f) in self.live_families() {
            s.anon_vmas += f.anon_vma_count() as u64;
            s.avcs += f.avc_count() as u64;
            avc_bytes += f.avc_bytes();
            for (id, _) in f.anon_vmas() {
                let n = f.stab(id, 0, u32::MAX).count() as u64;
                s.max_tree_avcs = s.max_tree_avcs.max(n);
            }
            s.hierarchy_depth = s.hierarchy_depth.max(depth(f));
        }
        if s.avcs > 0 {
            s.bytes_per_avc = avc_bytes as f64 / s.avcs as f64;
        }
        // (vmas visited, shared?) per page; walks are independent reads of
        // the world (young bits aside), so they run in parallel.
        let pages: Vec<_> = self.pages.iter_live().collect();
        let walks: Vec<(u64, bool)> = pages
            .par_iter()
            .map(|&page| {
                let shared = self.pages.mapcount(page) > 1;
                (u64::from(self.page_referenced(page).vmas_visited), shared)
            })
            .collect();
        let mean = |it: &mut dyn Iterator<Item = u64>| {
            let (n, sum) = it.fold((0u64, 0u64), |(n, t), v| (n + 1, t + v));
            if n == 0 { 0.0 } else { sum as f64 / n as f64 }
        };
        s.walk_vmas_mean = mean(&mut walks.iter().map(|w| w.0));
        s.walk_vmas_mean_shared = mean(&mut walks.iter().filter(|w| w.1).map(|w| w.0));
        s.walk_vmas_max = walks.iter().map(|w| w.0).max().unwrap_or(0);
        s
    }

    /// Bytes of every arena and table (capacity, not just what is in use).
    pub fn resident_bytes(&self) -> usize {
        let mms: usize = self.live_mms().map(|(_, m)| m.bytes()).sum();
        let families: usize = self
            .live_families()
            .map(|(_, f)| f.avc_bytes() + f.anon_vma_bytes())
            .sum();
        let spaces: usize = self.spaces.iter().map(|s| s.bytes()).sum();
        let caches: usize = self.page_cache.iter().map(|c| c.bytes()).sum();
        self.mms.bytes()
            + mms
            + self.mm_ids.bytes()
            + self.page_tables.bytes()
            + self.families.bytes()
            + families
            + self.family_ids.bytes()
            + spaces
            + caches
            + self.pages.bytes()
    }
}

/// The longest parent path in a family, counting anon_vmas.
fn depth(f: &super::family::Family) -> u64 {
    let mut memo: Vec<u64> = Vec::new();
    let mut best = 0;
    for (id, _) in f.anon_vmas() {
        best = best.max(depth_of(f, id, &mut memo));
    }
    best
}

fn depth_of(f: &super::family::Family, id: AnonVmaId, memo: &mut Vec<u64>) -> u64 {
    // Walk up to the root or a known depth, then fill in on the way back.
    let mut path = vec![];
    let mut at = id;
    let mut base = loop {
        if let Some(&d) = memo.get(at.index()).filter(|&&d| d > 0) {
            break d;
        }
        path.push(at);
        if at == f.root() {
            break 0;
        }
        at = f.anon_vma(at).parent();
    };
    for &p in path.iter().rev() {
        base += 1;
        if memo.len() <= p.index() {
            memo.resize(p.index() + 1, 0);
        }
        memo[p.index()] = base;
    }
    base
}
