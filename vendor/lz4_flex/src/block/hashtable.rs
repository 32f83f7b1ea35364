#[cfg(feature = "alloc")]
#[allow(unused_imports)]
use alloc::boxed::Box;

/// The Hashtable trait used by the compression to store hashed bytes to their position.
/// `val` can be maximum the size of the input in bytes.
///
/// `pos` can have a maximum value of u16::MAX or 65535
/// If the hashtable is smaller it needs to reduce the pos to its space, e.g. by right
/// shifting.
///
/// Duplication dictionary size.
///
/// Every four bytes is assigned an entry. When this number is lower, fewer entries exists, and
/// thus collisions are more likely, hurting the compression ratio.
///
/// hashes and right shifts to a maximum value of 16bit, 65535
/// The right shift is done in order to not exceed, the hashtables capacity
#[inline]
fn hash(sequence: u32) -> u32 {
    (sequence.wrapping_mul(2654435761_u32)) >> 16
}

/// hashes and right shifts to a maximum value of 16bit, 65535
/// The right shift is done in order to not exceed, the hashtables capacity
#[cfg(target_pointer_width = "64")]
#[inline]
fn hash5(sequence: usize) -> u32 {
    let primebytes = if cfg!(target_endian = "little") {
        889523592379_usize
    } else {
        11400714785074694791_usize
    };
    (((sequence << 24).wrapping_mul(primebytes)) >> 48) as u32
}

pub trait HashTable {
    fn get_at(&self, pos: usize) -> usize;
    fn put_at(&mut self, pos: usize, val: usize);
    fn clear(&mut self);
    #[inline]
    #[cfg(target_pointer_width = "64")]
    fn get_hash_at(input: &[u8], pos: usize) -> usize {
        hash5(super::compress::get_batch_arch(input, pos)) as usize
    }
    #[inline]
    #[cfg(target_pointer_width = "32")]
    fn get_hash_at(input: &[u8], pos: usize) -> usize {
        hash(super::compress::get_batch(input, pos)) as usize
    }
}

/// A table lent to the compressor (see `compress_independent`).
impl<T: HashTable> HashTable for &mut T {
    #[inline]
    fn get_at(&self, pos: usize) -> usize {
        (**self).get_at(pos)
    }
    #[inline]
    fn put_at(&mut self, pos: usize, val: usize) {
        (**self).put_at(pos, val)
    }
    #[inline]
    fn clear(&mut self) {
        (**self).clear()
    }
    #[inline]
    fn get_hash_at(input: &[u8], pos: usize) -> usize {
        T::get_hash_at(input, pos)
    }
}

const HASHTABLE_SIZE_4K: usize = 4 * 1024;
const HASHTABLE_BIT_SHIFT_4K: usize = 4;

const HASHTABLE_SIZE_8K_U16: usize = 8 * 1024;
const HASHTABLE_BIT_SHIFT_8K_U16: usize = 3;

/// An 8K entry hash table using 16-bit values, for inputs below `LZ4_64KLIMIT`.
///
/// It is the reference implementation's `byU16` table: with the default `LZ4_MEMORY_USAGE` of 14
/// (16 KiB of table), 16-bit entries leave room for 2^13 of them, and the slot of 4 bytes is the
/// top 13 bits of their 32-bit multiplicative hash (`LZ4_hash4` with `LZ4_HASHLOG + 1`).
#[derive(Debug)]
#[repr(align(64))]
pub struct HashTable8KU16 {
    #[cfg(feature = "alloc")]
    dict: Box<[u16; HASHTABLE_SIZE_8K_U16]>,
    #[cfg(not(feature = "alloc"))]
    dict: [u16; HASHTABLE_SIZE_8K_U16],
}
impl HashTable8KU16 {
    /// Creates a new zeroed hash table.
    #[cfg(feature = "alloc")]
    #[inline]
    pub fn new() -> Self {
        // This generates more efficient assembly in contrast to Box::new(slice), because of an
        // optimized call alloc_zeroed, vs. alloc + memset
        // try_into is optimized away
        let dict = alloc::vec![0; HASHTABLE_SIZE_8K_U16]
            .into_boxed_slice()
            .try_into()
            .unwrap();
        Self { dict }
    }

    /// Creates a new zeroed hash table.
    #[cfg(not(feature = "alloc"))]
    #[inline]
    pub const fn new() -> Self {
        Self {
            dict: [0; HASHTABLE_SIZE_8K_U16],
        }
    }
}
impl HashTable for HashTable8KU16 {
    #[inline]
    fn get_at(&self, hash: usize) -> usize {
        self.dict[hash >> HASHTABLE_BIT_SHIFT_8K_U16] as usize
    }
    #[inline]
    fn put_at(&mut self, hash: usize, val: usize) {
        self.dict[hash >> HASHTABLE_BIT_SHIFT_8K_U16] = val as u16;
    }
    #[inline]
    fn clear(&mut self) {
        self.dict.fill(0);
    }
    #[inline]
    fn get_hash_at(input: &[u8], pos: usize) -> usize {
        hash(super::get_batch(input, pos)) as usize
    }
}

/// The slots of a [`HashTable4K`], aligned to a cache line: clearing them (glibc's memset, with
/// `rep stosb` at this size) then costs the same wherever the allocator put them.
#[derive(Debug)]
#[repr(C, align(64))]
struct Slots4K([u32; HASHTABLE_SIZE_4K]);

/// A 4K entry hash table using 32-bit values.
#[derive(Debug)]
pub struct HashTable4K {
    #[cfg(feature = "alloc")]
    dict: Box<Slots4K>,
    #[cfg(not(feature = "alloc"))]
    dict: Slots4K,
    /// Every value stored so far is below this (see [`HashTable4K::rebased_for`]).
    next_base: u32,
}
impl HashTable4K {
    /// Creates a new zeroed hash table.
    #[cfg(feature = "alloc")]
    #[inline]
    pub fn new() -> Self {
        Self {
            dict: Box::new(Slots4K([0; HASHTABLE_SIZE_4K])),
            next_base: 0,
        }
    }

    /// Creates a new zeroed hash table.
    #[cfg(not(feature = "alloc"))]
    #[inline]
    pub const fn new() -> Self {
        Self {
            dict: Slots4K([0; HASHTABLE_SIZE_4K]),
            next_base: 0,
        }
    }

    /// Clears the table for compressing an independent input of `input_len` bytes with it.
    #[inline]
    pub fn clear_for(&mut self, input_len: usize) {
        self.clear();
        self.next_base = u32::try_from(input_len).map_or(u32::MAX, |len| len.saturating_add(1));
    }

    /// A view of the table that reads as zeroed (every slot: position 0), for compressing an
    /// independent input of `input_len` bytes (which stores positions `0..=input_len`), without
    /// clearing the 16 KiB: the view stores `base + position` and reads `stored - base`, 0 for
    /// anything stored before, with `base` above every value stored so far. Only when the 32-bit
    /// values would run out is the table cleared (once every 4 GiB of input).
    #[inline]
    pub fn rebased_for(&mut self, input_len: usize) -> Rebased4K<'_> {
        let len = u32::try_from(input_len).unwrap_or(u32::MAX);
        let base = match self
            .next_base
            .checked_add(len)
            .and_then(|n| n.checked_add(1))
        {
            Some(next_base) => core::mem::replace(&mut self.next_base, next_base),
            None => {
                self.clear_for(input_len);
                0
            }
        };
        Rebased4K {
            dict: &mut self.dict.0,
            base,
        }
    }

    /// Shifts all entries down by `offset`, clamping at zero.
    #[cold]
    #[allow(dead_code)]
    pub fn reposition(&mut self, offset: u32) {
        for i in self.dict.0.iter_mut() {
            *i = i.saturating_sub(offset);
        }
    }
}
impl HashTable for HashTable4K {
    #[inline]
    fn get_at(&self, hash: usize) -> usize {
        self.dict.0[hash >> HASHTABLE_BIT_SHIFT_4K] as usize
    }
    #[inline]
    fn put_at(&mut self, hash: usize, val: usize) {
        self.dict.0[hash >> HASHTABLE_BIT_SHIFT_4K] = val as u32;
    }
    #[inline]
    fn clear(&mut self) {
        self.dict.0.fill(0);
    }
}

/// A [`HashTable4K`] that reads as zeroed without having been cleared; see
/// [`HashTable4K::rebased_for`].
#[derive(Debug)]
pub struct Rebased4K<'a> {
    dict: &'a mut [u32; HASHTABLE_SIZE_4K],
    /// Added to positions when stored; stored values below it read as position 0.
    base: u32,
}
impl HashTable for Rebased4K<'_> {
    #[inline]
    fn get_at(&self, hash: usize) -> usize {
        self.dict[hash >> HASHTABLE_BIT_SHIFT_4K].saturating_sub(self.base) as usize
    }
    #[inline]
    fn put_at(&mut self, hash: usize, val: usize) {
        self.dict[hash >> HASHTABLE_BIT_SHIFT_4K] = (val as u32).wrapping_add(self.base);
    }
    #[inline]
    fn clear(&mut self) {
        self.dict.fill(0);
        self.base = 0;
    }
}

const HASHTABLE_SIZE_8K: usize = 8 * 1024;
const HASH_TABLE_BIT_SHIFT_8K: usize = 3;

#[derive(Debug)]
pub struct HashTable8K {
    #[cfg(feature = "alloc")]
    dict: Box<[u32; HASHTABLE_SIZE_8K]>,
    #[cfg(not(feature = "alloc"))]
    dict: [u32; HASHTABLE_SIZE_8K],
}
#[allow(dead_code)]
impl HashTable8K {
    #[cfg(feature = "alloc")]
    #[inline]
    pub fn new() -> Self {
        let dict = alloc::vec![0; HASHTABLE_SIZE_8K]
            .into_boxed_slice()
            .try_into()
            .unwrap();

        Self { dict }
    }
    #[cfg(not(feature = "alloc"))]
    #[inline]
    pub const fn new() -> Self {
        Self {
            dict: [0; HASHTABLE_SIZE_8K],
        }
    }
}
impl HashTable for HashTable8K {
    #[inline]
    fn get_at(&self, hash: usize) -> usize {
        self.dict[hash >> HASH_TABLE_BIT_SHIFT_8K] as usize
    }
    #[inline]
    fn put_at(&mut self, hash: usize, val: usize) {
        self.dict[hash >> HASH_TABLE_BIT_SHIFT_8K] = val as u32;
    }
    #[inline]
    fn clear(&mut self) {
        self.dict.fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rebased_view_reads_as_zeroed() {
        let mut table = HashTable4K::new();
        for round in 0..3 {
            let mut view = table.rebased_for(100);
            for hash in (0..1 << 16).step_by(16) {
                assert_eq!(view.get_at(hash), 0, "round {round}");
            }
            for hash in (0..1 << 16).step_by(32) {
                view.put_at(hash, 100);
            }
            assert_eq!(view.get_at(32), 100);
            assert_eq!(view.get_at(16), 0);
        }
        // When the 32-bit values would run out, the table is cleared and counts from 0 again.
        table.next_base = u32::MAX - 50;
        let mut view = table.rebased_for(100);
        assert_eq!(view.base, 0);
        for hash in (0..1 << 16).step_by(16) {
            assert_eq!(view.get_at(hash), 0);
        }
        view.put_at(0, 100);
        assert_eq!(table.next_base, 101);
        assert_eq!(table.dict.0[0], 100);
    }
}
