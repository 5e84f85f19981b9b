//! Tables whose entries never move: fixed-size chunks allocated on first use.
//!
//! The native engine allocates new mms and families (under its tasklist mutex)
//! while walkers read other slots through `&self` without any table lock, so a
//! table may grow but an entry's address must stay put. A `Vec` that reallocates
//! would move them; instead each table is a fixed array of chunk pointers, each
//! chunk a boxed slice set once ([`OnceLock`]) and never freed before the table.
//! Reading a slot is one atomic load of the chunk pointer plus an index.
//!
//! Slot ids are handed out by [`IdAlloc`] (LIFO reuse of freed ids, so a world
//! built from the same model and seed has the same ids), which the engine puts
//! under its tasklist mutex; the table itself only stores.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// Entries of `stride` elements each, in chunks of `chunk_slots` entries.
///
/// `stride` > 1 stores one page table (an array of PTEs) per slot contiguously,
/// so a walker reaches a PTE with a single dependent load.
pub struct Chunked<T> {
    stride: usize,
    /// Slots per chunk: a power of two, so locating a slot is a shift and a
    /// mask, not a division (walkers locate one per vma visited).
    chunk_slots: usize,
    /// log2(chunk_slots).
    shift: u32,
    chunks: Box<[OnceLock<Box<[T]>>]>,
}

impl<T> Chunked<T> {
    /// Room for at least `chunk_slots * max_chunks` slots; nothing is
    /// allocated yet. `chunk_slots` is rounded down to a power of two (a chunk
    /// never grows past the size asked for) and the chunk count up to match.
    pub fn new(stride: usize, chunk_slots: usize, max_chunks: usize) -> Self {
        assert!(stride > 0 && chunk_slots > 0 && max_chunks > 0);
        let shift = chunk_slots.ilog2();
        let pow2 = 1usize << shift;
        let max_chunks = (chunk_slots * max_chunks).div_ceil(pow2);
        Chunked {
            stride,
            chunk_slots: pow2,
            shift,
            chunks: (0..max_chunks).map(|_| OnceLock::new()).collect(),
        }
    }

    /// Elements per slot.
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// Slots this table can ever hold.
    pub fn max_slots(&self) -> usize {
        self.chunk_slots * self.chunks.len()
    }

    fn locate(&self, slot: usize) -> (usize, usize) {
        let (chunk, within) = (slot >> self.shift, slot & (self.chunk_slots - 1));
        (chunk, within * self.stride)
    }

    /// The slot's elements, or None if its chunk was never allocated.
    #[inline]
    pub fn get(&self, slot: usize) -> Option<&[T]> {
        let (chunk, at) = self.locate(slot);
        let chunk = self.chunks.get(chunk)?.get()?;
        Some(&chunk[at..at + self.stride])
    }

    /// The slot's elements, allocating its chunk (filled by `fill`) if needed.
    /// Safe to call through `&self` while others read: a chunk is published once.
    ///
    /// Panics past [`max_slots`](Self::max_slots): the table's size is fixed when
    /// the world is built (see `World::build`).
    pub fn get_or_grow(&self, slot: usize, fill: impl FnMut() -> T) -> &[T] {
        let (chunk, at) = self.locate(slot);
        let cell = self
            .chunks
            .get(chunk)
            .unwrap_or_else(|| panic!("slot {slot} beyond the table's {} slots", self.max_slots()));
        let len = self.chunk_slots * self.stride;
        let chunk = cell.get_or_init(|| std::iter::repeat_with(fill).take(len).collect());
        &chunk[at..at + self.stride]
    }

    /// Exclusive access to an allocated slot.
    pub fn get_mut(&mut self, slot: usize) -> Option<&mut [T]> {
        let (chunk, at) = self.locate(slot);
        let stride = self.stride;
        let chunk = self.chunks.get_mut(chunk)?.get_mut()?;
        Some(&mut chunk[at..at + stride])
    }

    /// Bytes held by allocated chunks and the chunk-pointer array.
    pub fn bytes(&self) -> usize {
        let allocated = self.chunks.iter().filter(|c| c.get().is_some()).count();
        allocated * self.chunk_slots * self.stride * size_of::<T>()
            + self.chunks.len() * size_of::<OnceLock<Box<[T]>>>()
    }

    /// The same table with every element mapped (chunk layout and ids kept), so
    /// the engine can wrap each entry in its own lock.
    pub fn map<U>(self, mut f: impl FnMut(T) -> U) -> Chunked<U> {
        let chunks = self
            .chunks
            .into_vec()
            .into_iter()
            .map(|cell| {
                let out = OnceLock::new();
                if let Some(chunk) = cell.into_inner() {
                    let mapped: Box<[U]> = chunk.into_vec().into_iter().map(&mut f).collect();
                    let _ = out.set(mapped);
                }
                out
            })
            .collect();
        Chunked {
            stride: self.stride,
            chunk_slots: self.chunk_slots,
            shift: self.shift,
            chunks,
        }
    }
}

/// A table of single entries: mms, families.
pub struct SlotTable<T>(Chunked<T>);

impl<T> SlotTable<T> {
    pub fn new(chunk_slots: usize, max_chunks: usize) -> Self {
        SlotTable(Chunked::new(1, chunk_slots, max_chunks))
    }

    #[inline]
    pub fn get(&self, slot: usize) -> Option<&T> {
        self.0.get(slot).map(|s| &s[0])
    }

    pub fn get_or_grow(&self, slot: usize, fill: impl FnMut() -> T) -> &T {
        &self.0.get_or_grow(slot, fill)[0]
    }

    pub fn get_mut(&mut self, slot: usize) -> Option<&mut T> {
        self.0.get_mut(slot).map(|s| &mut s[0])
    }

    pub fn bytes(&self) -> usize {
        self.0.bytes()
    }

    pub fn max_slots(&self) -> usize {
        self.0.max_slots()
    }

    pub fn map<U>(self, f: impl FnMut(T) -> U) -> SlotTable<U> {
        SlotTable(self.0.map(f))
    }
}

/// Hands out slot ids: freed ids first (last freed, first reused), then fresh.
#[derive(Clone, Debug, Default)]
pub struct IdAlloc {
    next: u32,
    free: Vec<u32>,
    live: u32,
}

impl IdAlloc {
    pub fn alloc(&mut self) -> u32 {
        self.live += 1;
        self.free.pop().unwrap_or_else(|| {
            self.next += 1;
            self.next - 1
        })
    }

    pub fn free(&mut self, id: u32) {
        debug_assert!(id < self.next && !self.free.contains(&id));
        self.live -= 1;
        self.free.push(id);
    }

    /// One past the highest id ever handed out: every live id is below it.
    pub fn high_water(&self) -> u32 {
        self.next
    }

    /// Ids currently allocated.
    pub fn live(&self) -> u32 {
        self.live
    }

    pub fn bytes(&self) -> usize {
        self.free.capacity() * size_of::<u32>()
    }
}

/// A fixed set of ids `0..capacity` handed out by CAS on a bitmap (set =
/// allocated): no lock. The page pool's free-page map and the swap device's
/// slot map (the kernel's swap_map "free" state) are both one of these.
pub struct BitAlloc {
    capacity: u32,
    used: Box<[AtomicU64]>,
    /// Word to start the next free-bit search at.
    hint: AtomicUsize,
    /// Ids allocated now.
    live: AtomicU32,
}

impl BitAlloc {
    pub fn new(capacity: u32) -> Self {
        let words = (capacity as usize).div_ceil(64);
        let used = (0..words)
            .map(|w| {
                // Bits past the capacity are permanently "used".
                let valid = (capacity as usize - w * 64).min(64);
                AtomicU64::new(if valid == 64 { 0 } else { !0 << valid })
            })
            .collect();
        BitAlloc {
            capacity,
            used,
            hint: AtomicUsize::new(0),
            live: AtomicU32::new(0),
        }
    }

    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Ids allocated now.
    pub fn live(&self) -> u32 {
        self.live.load(Ordering::Relaxed)
    }

    /// Take a free id; None if all are taken. Acquire: the previous owner's
    /// writes (before its [`free`](Self::free)) are visible.
    pub fn alloc(&self) -> Option<u32> {
        let words = self.used.len();
        let start = self.hint.load(Ordering::Relaxed);
        for i in 0..words {
            let w = (start + i) % words;
            let mut bits = self.used[w].load(Ordering::Relaxed);
            while bits != !0 {
                let bit = (!bits).trailing_zeros();
                match self.used[w].compare_exchange_weak(
                    bits,
                    bits | 1u64 << bit,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        self.hint.store(w, Ordering::Relaxed);
                        self.live.fetch_add(1, Ordering::Relaxed);
                        return Some((w * 64) as u32 + bit);
                    }
                    Err(now) => bits = now,
                }
            }
        }
        None
    }

    /// Give an allocated id back.
    pub fn free(&self, id: u32) {
        let (w, bit) = (id as usize / 64, id % 64);
        let prev = self.used[w].fetch_and(!(1u64 << bit), Ordering::Release);
        debug_assert!(prev & (1 << bit) != 0, "double free of id {id}");
        self.live.fetch_sub(1, Ordering::Relaxed);
    }

    /// Whether `id` is allocated.
    pub fn is_used(&self, id: u32) -> bool {
        id < self.capacity
            && self.used[id as usize / 64].load(Ordering::Acquire) & 1 << (id % 64) != 0
    }

    /// The first allocated id at or after `from`, wrapping around once, 64
    /// ids a word. None if none is allocated.
    pub fn next_used(&self, from: u32) -> Option<u32> {
        let cap = self.capacity;
        if cap == 0 {
            return None;
        }
        let start = from % cap;
        let words = self.used.len();
        let first = start as usize / 64;
        for i in 0..=words {
            let w = (first + i) % words;
            let mut bits = self.used[w].load(Ordering::Relaxed);
            if i == 0 {
                // Only bits at or after `start` in its own word, this lap.
                bits &= !0u64 << (start % 64);
            }
            while bits != 0 {
                let id = (w * 64) as u32 + bits.trailing_zeros();
                if id < cap {
                    return Some(id);
                }
                // Bits past the capacity are permanently set: skip them.
                bits &= bits - 1;
            }
        }
        None
    }

    pub fn bytes(&self) -> usize {
        self.used.len() * size_of::<AtomicU64>()
    }
}

/// Bytes a `slab` arena holds: its capacity (vacant entries included) times
/// the size of one entry. slab 0.4 stores `enum Entry<T> { Vacant(usize),
/// Occupied(T) }` (slab-0.4.12/src/lib.rs); the private mirror below has the
/// same layout.
pub fn slab_bytes<T>(slab: &slab::Slab<T>) -> usize {
    slab.capacity() * slab_entry_bytes::<T>()
}

/// Bytes of one `slab` arena entry holding a `T`.
pub fn slab_entry_bytes<T>() -> usize {
    #[allow(dead_code)] // only its size is used
    enum Entry<T> {
        Vacant(usize),
        Occupied(T),
    }
    size_of::<Entry<T>>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_do_not_move_when_the_table_grows() {
        let t: SlotTable<u64> = SlotTable::new(4, 8);
        let first = t.get_or_grow(1, || 7) as *const u64;
        for slot in 0..t.max_slots() {
            t.get_or_grow(slot, || 9);
        }
        assert_eq!(first, t.get(1).unwrap() as *const u64);
        assert_eq!(*t.get(1).unwrap(), 7);
        assert_eq!(*t.get(31).unwrap(), 9);
    }

    #[test]
    fn strided_slots_are_disjoint() {
        let mut c: Chunked<u8> = Chunked::new(3, 2, 2);
        c.get_or_grow(3, || 0);
        c.get_mut(3).unwrap().copy_from_slice(&[1, 2, 3]);
        assert!(c.get(0).is_none());
        assert_eq!(c.get(2).unwrap(), &[0, 0, 0]);
        assert_eq!(c.get(3).unwrap(), &[1, 2, 3]);
        let d = c.map(|x| x as u32 * 10);
        assert_eq!(d.get(3).unwrap(), &[10, 20, 30]);
    }

    #[test]
    fn ids_are_reused_last_freed_first() {
        let mut a = IdAlloc::default();
        let ids: Vec<u32> = (0..4).map(|_| a.alloc()).collect();
        assert_eq!(ids, vec![0, 1, 2, 3]);
        a.free(1);
        a.free(2);
        assert_eq!((a.alloc(), a.alloc(), a.alloc()), (2, 1, 4));
        assert_eq!((a.live(), a.high_water()), (5, 5));
    }
}
