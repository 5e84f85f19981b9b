//! Typed u32 ids for every object of the world.
//!
//! u32 rather than usize or pointers keeps the anon_vma_chain at 40 bytes (the
//! kernel's is 64 on x86-64, include/linux/rmap.h), which is what makes the
//! `bytes_per_avc <= 64` goal reachable with the tree links inside the node.
//! Ids of objects that live inside a family or an address space ([`AnonVmaId`],
//! [`AvcId`], [`FileVmaId`]) are local to it: a walker holding one family's lock
//! never needs another family's ids.

use serde::Serialize;
use std::fmt;

macro_rules! ids {
    ($($(#[doc = $doc:literal])* $name:ident => $prefix:literal,)*) => {$(
        $(#[doc = $doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        pub struct $name(pub u32);

        impl $name {
            /// The id as an index into its arena.
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    )*};
}

ids! {
    /// A task's address space (`struct mm_struct`): a slot in the world's mm table.
    MmId => "mm",
    /// One anon_vma family: everything under one root anon_vma, guarded by the root's rwsem.
    FamilyId => "fam",
    /// An anon_vma inside its family's arena.
    AnonVmaId => "av",
    /// An anon_vma_chain inside its family's arena.
    AvcId => "avc",
    /// A file (`struct address_space`) in the world's fixed file table.
    SpaceId => "file",
    /// A file vma's entry in its address space's i_mmap tree arena.
    FileVmaId => "fv",
    /// A page descriptor (`struct folio`) in the page pool.
    PageId => "page",
}
