//! What one object of each kind costs in the model beside what it costs in
//! the kernel (x86-64), for `inspect`.
//!
//! Kernel sizes and where they come from:
//!
//! | object | bytes | kernel | source |
//! |--------|-------|--------|--------|
//! | `struct anon_vma_chain` | 64 | v3.8+ (interval tree) to today | include/linux/rmap.h: vma, anon_vma (8 each), same_vma list_head (16), rb_node (24), rb_subtree_last (8) |
//! | `struct anon_vma` | 96 | v6.1+ | include/linux/rmap.h after 2555283eb40d: root (8), rw_semaphore (40: count, owner, osq + wait_lock, wait_list, with RWSEM_SPIN_ON_OWNER and no lockdep), refcount (4, then a 4-byte hole), num_children, num_active_vmas, parent (8 each), rb_root_cached (16) |
//! | `struct vm_area_struct` | 192 | v6.15 | pahole in Suren Baghdasaryan's vma layout series (linux-mm, January 2025): three cache lines with the per-VMA lock's refcount |
//!
//! Model sizes are the arena entry (slab 0.4's tag included) or the struct
//! itself for vmas, which live in a Vec.

use super::family::{AnonVma, Avc};
use super::mm::Vma;
use super::slots::slab_entry_bytes;
use serde::Serialize;

/// One object's size in the model and in the kernel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ObjectSize {
    pub object: &'static str,
    pub model_bytes: u64,
    pub kernel_bytes: u64,
    /// The kernel version (and architecture) the kernel figure is from.
    pub kernel: &'static str,
}

/// The table `inspect` prints.
pub fn object_sizes() -> Vec<ObjectSize> {
    vec![
        ObjectSize {
            object: "anon_vma_chain",
            model_bytes: slab_entry_bytes::<Avc>() as u64,
            kernel_bytes: 64,
            kernel: "v3.8+ x86-64",
        },
        ObjectSize {
            object: "anon_vma",
            model_bytes: slab_entry_bytes::<AnonVma>() as u64,
            kernel_bytes: 96,
            kernel: "v6.1+ x86-64",
        },
        ObjectSize {
            object: "vm_area_struct",
            model_bytes: size_of::<Vma>() as u64,
            kernel_bytes: 192,
            kernel: "v6.15 x86-64",
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_is_smaller_than_the_kernel_for_every_object() {
        for s in object_sizes() {
            assert!(s.model_bytes < s.kernel_bytes, "{s:?}");
        }
        assert_eq!(object_sizes()[0].model_bytes, 48, "the AVC goal");
    }
}
