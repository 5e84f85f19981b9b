//! Brute-force verification of a whole world: every counter recomputed from
//! scratch, every tree checked and compared with the links it should hold,
//! every walk compared with a scan of all mms. Slow (quadratic); for tests and
//! the engine's post-run check, never on a hot path.

use super::family::Family;
use super::ids::{AnonVmaId, AvcId, FamilyId, MmId, PageId, SpaceId};
use super::mm::{Backing, Vma};
use super::page::Mapping;
use super::pte;
use super::walk::{self, Locked, VmaVisit};
use super::world::World;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)*) => {
        if !$cond {
            return Err(format!($($fmt)*));
        }
    };
}

/// Per family, what the vmas say it should hold.
#[derive(Default)]
struct Expected {
    active: BTreeMap<AnonVmaId, u32>,
    owned: BTreeSet<AvcId>,
}

impl World {
    /// Check every invariant; the first violation found.
    pub fn check(&self) -> Result<(), String> {
        let mut expected: BTreeMap<FamilyId, Expected> = BTreeMap::new();
        let mut file_vmas: BTreeMap<SpaceId, usize> = BTreeMap::new();
        for (mid, mm) in self.live_mms() {
            let mut prev_end = 0;
            for v in mm.vmas() {
                ensure!(
                    prev_end <= v.start && v.start < v.end && v.end <= self.va_pages,
                    "{mid:?}: vma {v:?} overlaps or leaves the address space"
                );
                prev_end = v.end;
                self.check_vma(mid, v, &mut expected, &mut file_vmas)?;
            }
        }
        for (fid, f) in self.live_families() {
            let exp = expected.remove(&fid).unwrap_or_default();
            check_family(fid, f, &exp).map_err(|e| format!("{fid:?}: {e}"))?;
        }
        ensure!(
            expected.is_empty(),
            "vmas link to dead families {:?}",
            expected.keys()
        );
        for (i, space) in self.spaces.iter().enumerate() {
            let n = space
                .tree()
                .check(&space.entries)
                .map_err(|e| format!("file{i}: {e}"))?;
            let want = file_vmas.get(&SpaceId(i as u32)).copied().unwrap_or(0);
            ensure!(
                n == want && space.entries().count() == want,
                "file{i}: i_mmap holds {n} entries, {want} vmas map it"
            );
        }
        self.check_pages()?;
        for page in self.pages.iter_live() {
            self.check_walk(page)?;
        }
        Ok(())
    }

    fn check_vma(
        &self,
        mid: MmId,
        v: &Vma,
        expected: &mut BTreeMap<FamilyId, Expected>,
        file_vmas: &mut BTreeMap<SpaceId, usize>,
    ) -> Result<(), String> {
        let key = v.key(mid);
        if let Backing::File {
            space,
            entry,
            private,
        } = v.backing
        {
            ensure!(
                private || v.anon.is_none(),
                "{mid:?}: shared file vma with an anon_vma"
            );
            let e = self.spaces[space.index()].entries.get(entry.index());
            let ok = e.is_some_and(|e| {
                (e.mm, e.vm_start, e.pgoff(), e.last_pgoff())
                    == (mid, key.vm_start, key.pgoff, key.last_pgoff)
            });
            ensure!(ok, "{mid:?}: i_mmap entry of {v:?} is missing or stale");
            *file_vmas.entry(space).or_default() += 1;
        }
        let Some(link) = v.anon else {
            return Ok(());
        };
        let f = self
            .families
            .get(link.family.index())
            .and_then(Option::as_ref)
            .ok_or_else(|| format!("{mid:?}: vma {v:?} links to a dead family"))?;
        let exp = expected.entry(link.family).or_default();
        let chain: Vec<AvcId> = f.chain(Some(link.chain)).collect();
        ensure!(
            chain.len() as u32 == link.chain_len,
            "{mid:?}: chain of {v:?} has {} AVCs, link says {}",
            chain.len(),
            link.chain_len
        );
        let mut seen = BTreeSet::new();
        for id in &chain {
            let a = f.avc(*id);
            ensure!(
                (a.mm, a.vm_start, a.pgoff(), a.last_pgoff())
                    == (mid, key.vm_start, key.pgoff, key.last_pgoff),
                "{mid:?}: {id:?} is keyed for another vma than {v:?}"
            );
            ensure!(exp.owned.insert(*id), "{id:?} is on two vmas' chains");
            ensure!(seen.insert(a.anon_vma), "{mid:?}: two AVCs to one anon_vma");
        }
        ensure!(
            seen.contains(&link.anon_vma),
            "{mid:?}: vma's own anon_vma is not on its chain"
        );
        *exp.active.entry(link.anon_vma).or_default() += 1;
        Ok(())
    }

    /// The LRU holds every live page exactly once (on one list, or isolated
    /// when `isolated` says so). Separate from [`check`](Self::check): a
    /// world coming back from an engine that keeps no LRU has empty lists.
    pub fn check_lru(&self) -> Result<(), String> {
        use super::lru::List;
        let mut seen: BTreeMap<PageId, List> = BTreeMap::new();
        for list in [List::Active, List::Inactive] {
            for page in self.lru.pages(&self.pages, list) {
                if let Some(other) = seen.insert(page, list) {
                    return Err(format!("{page:?} is on the {list:?} and {other:?} lists"));
                }
            }
        }
        let live: Vec<PageId> = self.pages.iter_live().collect();
        let missing: Vec<&PageId> = live.iter().filter(|p| !seen.contains_key(p)).collect();
        ensure!(
            missing.len() == self.lru.isolated() as usize,
            "{} isolated, but {missing:?} are on no list",
            self.lru.isolated()
        );
        Ok(())
    }

    /// Mapcounts, pins, swap slots and PTE/vma consistency against a scan of
    /// all PTEs.
    fn check_pages(&self) -> Result<(), String> {
        let mut maps: BTreeMap<PageId, u32> = BTreeMap::new();
        let mut entries: BTreeMap<u32, u32> = BTreeMap::new();
        for (mid, mm) in self.live_mms() {
            let ptes = self.page_tables.table(mid).expect("live mm page table");
            for (addr, slot) in ptes.iter().enumerate() {
                let p = pte::load(slot);
                if let Some(swap) = p.swap_slot() {
                    let v = mm.vma(addr as u32);
                    ensure!(
                        v.is_some_and(|v| v.is_private() && v.anon.is_some()),
                        "{mid:?}@{addr}: swap entry outside a private vma with an anon_vma"
                    );
                    *entries.entry(swap).or_default() += 1;
                    continue;
                }
                let Some(page) = p.page() else {
                    ensure!(p.0 == 0, "{mid:?}@{addr}: flags on a non-present PTE");
                    continue;
                };
                *maps.entry(page).or_default() += 1;
                let v = mm
                    .vma(addr as u32)
                    .ok_or_else(|| format!("{mid:?}@{addr}: PTE outside any vma"))?;
                ensure!(
                    self.pages.index(page) == v.pgoff_of(addr as u32),
                    "{mid:?}@{addr}: {page:?} has the wrong index"
                );
                let ok = match (self.pages.mapping(page), v.backing) {
                    (Some(Mapping::File { space }), Backing::File { space: s, .. }) => space == s,
                    (Some(Mapping::Anon { family, anon_vma }), _) if v.is_private() => {
                        v.anon.is_some_and(|l| {
                            l.family == family
                                && self
                                    .family(family)
                                    .chain(Some(l.chain))
                                    .any(|a| self.family(family).avc(a).anon_vma == anon_vma)
                        })
                    }
                    _ => false,
                };
                ensure!(ok, "{mid:?}@{addr}: {page:?} is not reachable from its vma");
            }
        }
        for page in self.pages.iter_live() {
            let want = maps.remove(&page).unwrap_or(0);
            ensure!(
                self.pages.mapcount(page) == want,
                "{page:?}: mapcount {} but {want} PTEs map it",
                self.pages.mapcount(page)
            );
            let cached = match self.pages.mapping(page) {
                Some(Mapping::File { space }) => {
                    let index = self.pages.index(page);
                    self.page_cache[space.index()].get(index) == Some(page)
                }
                _ => false,
            };
            let swapped = self.pages.swap_slot(page).is_some();
            if let Some(slot) = self.pages.swap_slot(page) {
                ensure!(
                    self.pages.swap.lookup(slot) == Some(page),
                    "{page:?}: in swap slot {slot}, whose cache holds {:?}",
                    self.pages.swap.lookup(slot)
                );
            }
            let pins = u32::from(cached) + u32::from(swapped);
            ensure!(
                self.pages.pins(page) == pins,
                "{page:?}: {} pins, expected {pins}",
                self.pages.pins(page)
            );
            ensure!(
                want > 0 || cached || swapped,
                "{page:?} is live but unreferenced"
            );
        }
        ensure!(maps.is_empty(), "PTEs map free pages {:?}", maps.keys());
        self.check_swap(&entries)
    }

    /// Every swap slot against the swap entries found in PTEs: a slot is in
    /// use iff an entry names it or it caches a page, and counts its entries.
    fn check_swap(&self, entries: &BTreeMap<u32, u32>) -> Result<(), String> {
        let swap = &self.pages.swap;
        let mut used = 0;
        for slot in 0..self.pages.capacity() {
            let n = entries.get(&slot).copied().unwrap_or(0);
            let cached = swap.lookup(slot);
            ensure!(
                swap.is_used(slot) == (n > 0 || cached.is_some()),
                "swap slot {slot}: in use {} with {n} entries and cache {cached:?}",
                swap.is_used(slot)
            );
            ensure!(
                swap.count(slot) == n,
                "swap slot {slot}: count {} but {n} PTEs name it",
                swap.count(slot)
            );
            if let Some(page) = cached {
                ensure!(
                    self.pages.swap_slot(page) == Some(slot),
                    "swap slot {slot} caches {page:?}, which names {:?}",
                    self.pages.swap_slot(page)
                );
            }
            used += u32::from(swap.is_used(slot));
        }
        ensure!(
            used == swap.used(),
            "{} slots counted in use, {used} found",
            swap.used()
        );
        Ok(())
    }

    /// The walk of `page` visits exactly the vmas a scan of every mm finds
    /// linked to the page's anon_vma (or mapping its file) over its index, and
    /// the PTEs among them that map it are exactly the PTEs in the world that do.
    pub fn check_walk(&self, page: PageId) -> Result<(), String> {
        let mapping = self.pages.mapping(page).ok_or("walk of a free page")?;
        let index = self.pages.index(page);
        let locked = match mapping {
            Mapping::Anon { family, .. } => Locked::Family(family, self.family(family)),
            Mapping::File { space } => Locked::Space(space, &self.spaces[space.index()]),
        };
        let mut visits = Vec::new();
        walk::rmap_walk(locked, &self.pages, page, |v| {
            visits.push(v);
            ControlFlow::Continue(())
        })
        .ok_or("walk raced")?;
        visits.sort();
        let mut want = Vec::new();
        let mut mapped_want = BTreeSet::new();
        for (mid, mm) in self.live_mms() {
            for v in mm.vmas() {
                if let Some(addr) = v.addr_of(index).filter(|_| self.may_map(v, mapping)) {
                    want.push(VmaVisit {
                        mm: mid,
                        vm_start: v.start,
                        addr,
                    });
                }
            }
            let ptes = self.page_tables.table(mid).expect("live mm page table");
            for (addr, slot) in ptes.iter().enumerate() {
                if pte::load(slot).maps(page) {
                    mapped_want.insert((mid, addr as u32));
                }
            }
        }
        want.sort();
        ensure!(
            visits == want,
            "walk of {page:?} visited {visits:?}, vmas linked over its index are {want:?}"
        );
        let mapped: BTreeSet<(MmId, u32)> = visits
            .iter()
            .filter(|v| {
                let slot = self.page_tables.pte(v.mm, v.addr).expect("visited PTE");
                pte::load(slot).maps(page)
            })
            .map(|v| (v.mm, v.addr))
            .collect();
        ensure!(
            mapped == mapped_want,
            "walk of {page:?} finds it mapped at {mapped:?}, PTEs map it at {mapped_want:?}"
        );
        Ok(())
    }

    /// Whether `v` is one a walk of a page with `mapping` must visit: linked
    /// to its anon_vma (by the vma's chain, not the tree), or mapping its file.
    fn may_map(&self, v: &Vma, mapping: Mapping) -> bool {
        match (mapping, v.backing, v.anon) {
            (Mapping::Anon { family, anon_vma }, _, Some(l)) if l.family == family => {
                let f = self.family(family);
                f.chain(Some(l.chain))
                    .any(|a| f.avc(a).anon_vma == anon_vma)
            }
            (Mapping::File { space }, Backing::File { space: s, .. }, _) => space == s,
            _ => false,
        }
    }
}

/// One family's trees and counters against what its vmas imply.
fn check_family(fid: FamilyId, f: &Family, exp: &Expected) -> Result<(), String> {
    let root = f.root();
    ensure!(
        f.anon_vma(root).parent() == root,
        "root is not its own parent"
    );
    let mut children: BTreeMap<AnonVmaId, u32> = BTreeMap::new();
    for (id, a) in f.anon_vmas() {
        ensure!(
            f.try_anon_vma(a.parent()).is_some(),
            "{id:?}: parent is freed"
        );
        *children.entry(a.parent()).or_default() += 1;
        // The parent chain must reach the root.
        let mut at = id;
        for _ in 0..=f.anon_vma_count() {
            if at == root {
                break;
            }
            at = f.anon_vma(at).parent();
        }
        ensure!(at == root, "{id:?}: parent chain does not reach the root");
    }
    for (id, a) in f.anon_vmas() {
        let n = a
            .tree()
            .check(&f.avcs)
            .map_err(|e| format!("{id:?}: {e}"))?;
        ensure!(n > 0, "{id:?}: empty tree, should have been freed");
        let linked = f.avcs().filter(|(_, c)| c.anon_vma() == id).count();
        ensure!(
            n == linked,
            "{id:?}: tree holds {n}, {linked} AVCs point at it"
        );
        let want = children.get(&id).copied().unwrap_or(0);
        ensure!(
            a.num_children() == want,
            "{id:?}: num_children {} != {want}",
            a.num_children()
        );
        let want = exp.active.get(&id).copied().unwrap_or(0);
        ensure!(
            a.num_active_vmas() == want,
            "{id:?}: num_active_vmas {} != {want}",
            a.num_active_vmas()
        );
        let want = if id == root {
            f.anon_vma_count() as u32
        } else {
            1
        };
        ensure!(
            a.refcount() == want,
            "{id:?}: refcount {} != {want}",
            a.refcount()
        );
    }
    ensure!(
        exp.owned.len() == f.avc_count(),
        "{} AVCs, {} on vmas' chains ({fid:?} leaks)",
        f.avc_count(),
        exp.owned.len()
    );
    Ok(())
}
