//! `--shard I/N`: one of N slices of a sweep's point list, so a large sweep can
//! run as a batch scheduler's job array (Slurm `--array=1-N`, with
//! `--shard $SLURM_ARRAY_TASK_ID/N`) and be joined by `rmap-storm merge`.
//!
//! Slices are round-robin: shard I takes points I-1, I-1+N, I-1+2N, ... of the
//! full list. Round-robin rather than contiguous because the list runs repeat by
//! repeat and lock by lock, so every shard gets a like mix of cheap and costly
//! points (spinlock at the top thread count is the slow one) and finishes at
//! about the same time.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Slice `index` (1-based) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Whether the point at `point` (0-based, in the full list) is in this slice.
    pub fn contains(&self, point: usize) -> bool {
        point % self.count as usize == (self.index - 1) as usize
    }
}

impl FromStr for Shard {
    type Err = String;

    /// `I/N` with 1 <= I <= N.
    fn from_str(text: &str) -> Result<Shard, String> {
        let bad = || format!("'{text}' is not a shard I/N with 1 <= I <= N (e.g. 1/4)");
        let (index, count) = text.split_once('/').ok_or_else(bad)?;
        let index: u32 = index.trim().parse().map_err(|_| bad())?;
        let count: u32 = count.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_valid_shards_and_rejects_the_rest() {
        assert_eq!("2/3".parse(), Ok(Shard { index: 2, count: 3 }));
        assert_eq!("1/1".parse(), Ok(Shard { index: 1, count: 1 }));
        for bad in ["3/2", "0/2", "1/0", "0/0", "2", "a/b", "1/2/3", "-1/2", ""] {
            let err = bad.parse::<Shard>().unwrap_err();
            assert!(err.contains("I/N"), "{bad}: {err}");
        }
    }

    #[test]
    fn round_robin_slices() {
        let shard: Shard = "2/3".parse().unwrap();
        let taken: Vec<usize> = (0..8).filter(|&p| shard.contains(p)).collect();
        assert_eq!(taken, [1, 4, 7]);
    }
}
