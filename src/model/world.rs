//! The `[world]` section: the initial world a model builds.
//!
//! ```toml
//! [world]
//! seed = 7             # RNG seed for which pages each child writes
//! ancestors = 1        # exec'd tasks that own their anon_vma families
//! tasks = 10001        # all tasks, ancestors included
//! shape = "flat"       # flat | chain | tree: how descendants are forked
//! fan_out = 8          # children per task when shape = "tree"
//! anon_vmas = 4        # private anonymous vmas per task
//! pages_per_vma = 16   # pages of each, all faulted in by the ancestor
//! cow = 0.25           # share of inherited pages each child writes (COW)
//! va_pages = 256       # address-space pages per task (page-table size)
//! files = 0            # shared files
//! file_pages = 0       # pages of each file
//! file_mappers = 0     # tasks mapping each file
//! rmap = "chain"       # chain (anon_vma_chain, 2.6.34+) | list (2.6.2x)
//! file_unlink = "batch" # batch (unlink_file_vma_batch, 2024+) | single
//! find_vma_cache = "none" # none (maple tree, 6.1+) | task (vmacache,
//!                      # 3.15-6.0) | mm (one mm->mmap_cache, before 3.15)
//! ```
//!
//! Address-space layout of every task (the same in all, so children inherit
//! it): anon vma `i` at page `i * (pages_per_vma + 1)`, then file `f` at
//! `anon_vmas * (pages_per_vma + 1) + f * (file_pages + 1)`; the page after
//! each mapping stays unmapped so no two mappings are adjacent (adjacent
//! compatible vmas would merge, or share an anon_vma through
//! find_mergeable_anon_vma).

use serde::{Deserialize, Serialize};

/// How descendants are forked from each ancestor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Shape {
    /// Every descendant is a child of the ancestor (AIM7, Apache prefork).
    Flat,
    /// Each descendant forks the next: the deepest anon_vma hierarchy.
    Chain,
    /// A complete `fan_out`-ary tree, breadth first.
    Tree,
}

impl Shape {
    /// The name model files use.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Flat => "flat",
            Shape::Chain => "chain",
            Shape::Tree => "tree",
        }
    }
}

/// How anonymous vmas of one family are linked to anon_vmas.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RmapLayout {
    /// anon_vma_chain (2.6.34+): per-child anon_vmas, walks query the page's
    /// own anon_vma tree.
    #[default]
    Chain,
    /// The 2.6.2x list: one anon_vma per family, every descendant's vma on
    /// it, walks visit every vma of the list.
    List,
}

/// How free_pgtables unlinks file vmas from their i_mmap tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileUnlink {
    /// unlink_file_vma_batch (2024): one i_mmap WRITE per batch of
    /// [`FILE_BATCH`](crate::rmap::unmap::FILE_BATCH) vmas of one file.
    #[default]
    Batch,
    /// unlink_file_vma per vma (every kernel before the batch).
    Single,
}

impl FileUnlink {
    /// File vmas unlinked per i_mmap WRITE hold.
    pub fn batch_size(self) -> usize {
        match self {
            FileUnlink::Batch => crate::rmap::unmap::FILE_BATCH,
            FileUnlink::Single => 1,
        }
    }
}

/// The cache find_vma consults before walking the mm's vma tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FindVmaCache {
    /// No cache (6.1+: the maple tree replaced vmacache).
    #[default]
    None,
    /// Per-thread vmacache validated by `mm->vmacache_seqnum` (3.15-6.0,
    /// Davidlohr Bueso's 615d6e8756c8; Eric Dumazet's 2007 proposal): a
    /// lookup reads the shared sequence number, every vma change bumps it.
    Task,
    /// One `mm->mmap_cache` (before 3.15): a lookup that misses it writes
    /// it, so threads faulting in different vmas bounce its line.
    Mm,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorldSpec {
    #[serde(default = "default_seed")]
    pub seed: u64,
    pub ancestors: u32,
    pub tasks: u32,
    pub shape: Shape,
    #[serde(default = "default_fan_out")]
    pub fan_out: u32,
    pub anon_vmas: u32,
    pub pages_per_vma: u32,
    #[serde(default)]
    pub cow: f64,
    pub va_pages: u32,
    #[serde(default)]
    pub files: u32,
    #[serde(default)]
    pub file_pages: u32,
    #[serde(default)]
    pub file_mappers: u32,
    /// The anon_vma layout: `chain` (2.6.34+) or `list` (2.6.2x).
    #[serde(default)]
    pub rmap: RmapLayout,
    /// How exit/munmap unlinks file vmas: `batch` (2024+) or `single`.
    #[serde(default)]
    pub file_unlink: FileUnlink,
    /// find_vma's cache: `none` (6.1+), `task` (3.15-6.0) or `mm` (before).
    #[serde(default)]
    pub find_vma_cache: FindVmaCache,
}

fn default_seed() -> u64 {
    1
}

fn default_fan_out() -> u32 {
    2
}

/// Every `[world]` key and its allowed values, as error messages print them.
pub const KEYS: &[(&str, &str)] = &[
    ("seed", "0..=18446744073709551615"),
    ("ancestors", "1..=world.tasks"),
    ("tasks", "1..=1000000"),
    ("shape", "flat, chain, tree"),
    ("fan_out", "1..=1000000"),
    ("anon_vmas", "0..=1024"),
    ("pages_per_vma", "1..=world.va_pages"),
    ("cow", "0.0..=1.0"),
    ("va_pages", "1..=1048576"),
    ("files", "0..=1024"),
    ("file_pages", "1..=1048576 when files > 0"),
    ("file_mappers", "1..=world.tasks when files > 0"),
    ("rmap", "chain, list"),
    ("file_unlink", "batch, single"),
    ("find_vma_cache", "none, task, mm"),
];

// Upper bounds. Tasks: AIM7 ran "10s of thousands of tasks" (seed 004); a
// million leaves room for sweeps. va_pages: 4 GiB of 4 KiB pages per task.
const MAX_TASKS: u32 = 1_000_000;
const MAX_FAN_OUT: u32 = 1_000_000;
const MAX_ANON_VMAS: u32 = 1024;
const MAX_VA_PAGES: u32 = 1 << 20;
const MAX_FILES: u32 = 1024;
const MAX_FILE_PAGES: u32 = 1 << 20;
/// PTEs across all tasks: 1 GiB of 4-byte PTEs.
const MAX_PTES: u64 = 1 << 28;
/// Page descriptors: 64 Mi pages, 1 GiB of 16-byte descriptors.
pub const MAX_POOL_PAGES: u64 = 1 << 26;
/// anon_vma_chains: 20 M at 48 bytes is about 1 GiB.
const MAX_AVCS: u64 = 20_000_000;

/// A validation failure: which key, what is wrong, what is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyError {
    pub key: String,
    pub message: String,
    pub allowed: String,
}

fn err(key: &str, message: impl Into<String>, allowed: impl Into<String>) -> KeyError {
    KeyError {
        key: format!("world.{key}"),
        message: message.into(),
        allowed: allowed.into(),
    }
}

fn in_range(key: &str, v: u32, lo: u32, hi: u32) -> Result<(), KeyError> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(err(
            key,
            format!("{v} is out of range"),
            format!("{lo}..={hi}"),
        ))
    }
}

impl WorldSpec {
    /// Check every range and the combined bounds; the first failure.
    pub fn validate(&self) -> Result<(), KeyError> {
        in_range("tasks", self.tasks, 1, MAX_TASKS)?;
        in_range("ancestors", self.ancestors, 1, self.tasks)?;
        in_range("fan_out", self.fan_out, 1, MAX_FAN_OUT)?;
        in_range("va_pages", self.va_pages, 1, MAX_VA_PAGES)?;
        in_range("anon_vmas", self.anon_vmas, 0, MAX_ANON_VMAS)?;
        in_range("pages_per_vma", self.pages_per_vma, 1, self.va_pages)?;
        if !(0.0..=1.0).contains(&self.cow) {
            return Err(err(
                "cow",
                format!("{} is out of range", self.cow),
                "0.0..=1.0",
            ));
        }
        in_range("files", self.files, 0, MAX_FILES)?;
        if self.files > 0 {
            in_range("file_pages", self.file_pages, 1, MAX_FILE_PAGES)?;
            in_range("file_mappers", self.file_mappers, 1, self.tasks)?;
        }
        self.check_layout()?;
        self.check_totals()
    }

    /// Address-space pages the layout needs (each mapping plus its hole).
    fn file_span(&self) -> u64 {
        u64::from(self.files) * (u64::from(self.file_pages) + 1)
    }

    fn layout_pages(&self) -> u64 {
        u64::from(self.anon_vmas) * (u64::from(self.pages_per_vma) + 1) + self.file_span()
    }

    fn check_layout(&self) -> Result<(), KeyError> {
        let need = self.layout_pages();
        let va = u64::from(self.va_pages);
        if need <= va {
            return Ok(());
        }
        let files = if self.files > 0 {
            format!(" and {} files of {} pages", self.files, self.file_pages)
        } else {
            String::new()
        };
        let msg = format!(
            "{} anon vmas of {} pages{files} need {need} pages (one hole after each), \
             beyond va_pages = {va}",
            self.anon_vmas, self.pages_per_vma
        );
        let room = va.saturating_sub(self.file_span());
        if self.anon_vmas > 0 && room / u64::from(self.anon_vmas) >= 2 {
            let max = room / u64::from(self.anon_vmas) - 1;
            return Err(err("pages_per_vma", msg, format!("1..={max}")));
        }
        Err(err("va_pages", msg, format!("{need}..={MAX_VA_PAGES}")))
    }

    fn check_totals(&self) -> Result<(), KeyError> {
        let tasks = u64::from(self.tasks);
        if tasks * u64::from(self.va_pages) > MAX_PTES {
            let max = MAX_PTES / tasks;
            return Err(err(
                "va_pages",
                format!(
                    "{tasks} tasks x {} PTEs exceed {MAX_PTES} PTEs",
                    self.va_pages
                ),
                format!("1..={max}"),
            ));
        }
        if self.page_bound() > MAX_POOL_PAGES {
            return Err(err(
                "pages_per_vma",
                format!("the world could hold {} pages", self.page_bound()),
                format!("a world of at most {MAX_POOL_PAGES} pages"),
            ));
        }
        let avcs = self.avc_bound();
        if avcs > MAX_AVCS {
            return Err(err(
                "tasks",
                format!(
                    "{} tasks forked as a {} with {} anon vmas make up to {avcs} anon_vma_chains",
                    self.tasks,
                    self.shape.name(),
                    self.anon_vmas
                ),
                format!("a world of at most {MAX_AVCS} anon_vma_chains"),
            ));
        }
        Ok(())
    }

    /// Descendants forked from ancestor `a` (tasks beyond the ancestors,
    /// spread evenly, the first ancestors taking the remainder).
    pub fn descendants_of(&self, a: u32) -> u32 {
        let d = self.tasks - self.ancestors;
        d / self.ancestors + u32::from(a < d % self.ancestors)
    }

    /// The parent of task `k` (k >= 1) within one ancestor's tree, where task 0
    /// is the ancestor and tasks are numbered in fork order.
    pub fn parent_of(&self, k: u32) -> u32 {
        debug_assert!(k >= 1);
        match self.shape {
            Shape::Flat => 0,
            Shape::Chain => k - 1,
            Shape::Tree => (k - 1) / self.fan_out,
        }
    }

    /// The depth of task `k` in its ancestor's fork tree (the ancestor is 0).
    pub fn depth_of(&self, k: u32) -> u32 {
        match self.shape {
            Shape::Flat => u32::from(k > 0),
            Shape::Chain => k,
            Shape::Tree => {
                let (mut d, mut k) = (0, k);
                while k > 0 {
                    k = (k - 1) / self.fan_out;
                    d += 1;
                }
                d
            }
        }
    }

    /// An upper bound on AVCs: a task at depth d links each anon vma to d + 1
    /// anon_vmas (anon_vma_fork in mm/rmap.c; docs/kernel.md), reuse aside.
    pub fn avc_bound(&self) -> u64 {
        let per_ancestor = |n: u32| -> u64 {
            match self.shape {
                Shape::Flat => 1 + 2 * u64::from(n),
                Shape::Chain => {
                    let n = u64::from(n);
                    (n + 1) * (n + 2) / 2
                }
                Shape::Tree => (0..=n).map(|k| u64::from(self.depth_of(k)) + 1).sum(),
            }
        };
        let total: u64 = (0..self.ancestors)
            .map(|a| per_ancestor(self.descendants_of(a)))
            .sum();
        total * u64::from(self.anon_vmas)
    }

    /// An upper bound on pages: every task owning every anon page privately,
    /// plus every file page cached.
    pub fn page_bound(&self) -> u64 {
        u64::from(self.tasks) * u64::from(self.anon_vmas) * u64::from(self.pages_per_vma)
            + u64::from(self.files) * u64::from(self.file_pages)
    }

    /// First page of anon vma `i` in every task.
    pub fn anon_vma_start(&self, i: u32) -> u32 {
        i * (self.pages_per_vma + 1)
    }

    /// First page of file `f`'s mapping in every task that maps it.
    pub fn file_start(&self, f: u32) -> u32 {
        self.anon_vmas * (self.pages_per_vma + 1) + f * (self.file_pages + 1)
    }

    /// Whether the task numbered `t` (0-based, creation order over the whole
    /// world) maps file `f`: a block of `file_mappers` consecutive tasks
    /// starting at `f * file_mappers`, wrapping, so files spread over tasks.
    pub fn maps_file(&self, t: u32, f: u32) -> bool {
        let first = (u64::from(f) * u64::from(self.file_mappers)) % u64::from(self.tasks);
        let off = (u64::from(t) + u64::from(self.tasks) - first) % u64::from(self.tasks);
        off < u64::from(self.file_mappers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(shape: Shape, tasks: u32, ancestors: u32) -> WorldSpec {
        WorldSpec {
            seed: 1,
            ancestors,
            tasks,
            shape,
            fan_out: 3,
            anon_vmas: 2,
            pages_per_vma: 4,
            cow: 0.5,
            va_pages: 64,
            files: 1,
            file_pages: 4,
            file_mappers: 2,
            rmap: RmapLayout::Chain,
            file_unlink: FileUnlink::Batch,
            find_vma_cache: FindVmaCache::None,
        }
    }

    #[test]
    fn avc_bound_counts_depth_plus_one_per_vma() {
        // Brute force over the fork trees.
        for shape in [Shape::Flat, Shape::Chain, Shape::Tree] {
            for (tasks, anc) in [(1, 1), (10, 1), (11, 3), (40, 7)] {
                let s = spec(shape, tasks, anc);
                let brute: u64 = (0..anc)
                    .map(|a| {
                        (0..=s.descendants_of(a))
                            .map(|k| u64::from(s.depth_of(k)) + 1)
                            .sum::<u64>()
                    })
                    .sum::<u64>()
                    * 2;
                assert_eq!(s.avc_bound(), brute, "{shape:?} {tasks} {anc}");
            }
        }
    }

    #[test]
    fn descendants_add_up_and_parents_precede_children() {
        let s = spec(Shape::Tree, 40, 7);
        assert_eq!((0..7).map(|a| s.descendants_of(a)).sum::<u32>(), 33);
        for k in 1..50 {
            assert!(s.parent_of(k) < k);
            assert_eq!(s.depth_of(k), s.depth_of(s.parent_of(k)) + 1);
        }
    }

    #[test]
    fn each_file_has_its_mappers() {
        let mut s = spec(Shape::Flat, 10, 1);
        s.files = 3;
        s.file_mappers = 4;
        for f in 0..3 {
            assert_eq!((0..10).filter(|&t| s.maps_file(t, f)).count(), 4);
        }
    }

    #[test]
    fn layout_overflow_names_the_largest_fitting_vma() {
        let mut s = spec(Shape::Flat, 10, 1);
        s.pages_per_vma = 40;
        let e = s.validate().unwrap_err();
        // 64 pages - file (4 + 1) = 59 for 2 vmas: 29 each with its hole, so 28.
        assert_eq!(
            (e.key.as_str(), e.allowed.as_str()),
            ("world.pages_per_vma", "1..=28")
        );
    }
}
