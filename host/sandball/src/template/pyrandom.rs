//! Python's `random.Random(seed)`: the Mersenne Twister (MT19937) seeded as Python 3
//! seeds it from an integer or a text, with `randrange`, `choice` and `shuffle` drawing
//! as Python draws. The `random` and `shuffle` filters use it for their `seed`, so
//! that `59 | random(seed=inventory_hostname)` picks the minute ansible-core picks.

use sha2::{Digest, Sha512};

const N: usize = 624;
const M: usize = 397;

/// One seeded generator.
pub(crate) struct PyRandom {
    mt: [u32; N],
    index: usize,
}

impl PyRandom {
    /// `Random(n)` for an integer: its magnitude is the key.
    pub(crate) fn from_int(n: i128) -> PyRandom {
        PyRandom::from_magnitude_le(&n.unsigned_abs().to_le_bytes())
    }

    /// `Random(text)`: the text's UTF-8 bytes followed by their SHA-512, read as one
    /// big-endian integer.
    pub(crate) fn from_text(text: &str) -> PyRandom {
        let mut bytes = text.as_bytes().to_vec();
        bytes.extend_from_slice(&Sha512::digest(text.as_bytes()));
        bytes.reverse();
        PyRandom::from_magnitude_le(&bytes)
    }

    /// Seeds from a non-negative integer given as little-endian bytes: its 32-bit words,
    /// least significant first, without the leading zero words (one word for zero).
    fn from_magnitude_le(bytes: &[u8]) -> PyRandom {
        let mut key: Vec<u32> = bytes
            .chunks(4)
            .map(|chunk| {
                let mut word = [0u8; 4];
                word[..chunk.len()].copy_from_slice(chunk);
                u32::from_le_bytes(word)
            })
            .collect();
        while key.len() > 1 && key.last() == Some(&0) {
            key.pop();
        }
        if key.is_empty() {
            key.push(0);
        }
        let mut rng = PyRandom {
            mt: [0; N],
            index: N,
        };
        rng.init_by_array(&key);
        rng
    }

    fn init_genrand(&mut self, seed: u32) {
        self.mt[0] = seed;
        for i in 1..N {
            let prev = self.mt[i - 1];
            self.mt[i] = 1_812_433_253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        self.index = N;
    }

    fn init_by_array(&mut self, key: &[u32]) {
        self.init_genrand(19_650_218);
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..N.max(key.len()) {
            let prev = self.mt[i - 1];
            self.mt[i] = (self.mt[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                self.mt[0] = self.mt[N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..N - 1 {
            let prev = self.mt[i - 1];
            self.mt[i] = (self.mt[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_566_083_941))
                .wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                self.mt[0] = self.mt[N - 1];
                i = 1;
            }
        }
        self.mt[0] = 0x8000_0000;
    }

    fn next_u32(&mut self) -> u32 {
        if self.index >= N {
            let twist = |a: u32, b: u32| {
                let y = (a & 0x8000_0000) | (b & 0x7fff_ffff);
                (y >> 1) ^ if y & 1 == 1 { 0x9908_b0df } else { 0 }
            };
            for k in 0..N {
                self.mt[k] = self.mt[(k + M) % N] ^ twist(self.mt[k], self.mt[(k + 1) % N]);
            }
            self.index = 0;
        }
        let mut y = self.mt[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// `getrandbits(k)` for `k` up to 64: 32-bit words, least significant first, the
    /// last one cut to the bits left.
    fn bits(&mut self, k: u32) -> u64 {
        let mut out = 0u64;
        let mut left = k;
        let mut shift = 0;
        while left > 0 {
            let mut word = u64::from(self.next_u32());
            if left < 32 {
                word >>= 32 - left;
            }
            out |= word << shift;
            shift += 32;
            left = left.saturating_sub(32);
        }
        out
    }
}

/// Python's draws from a source of numbers below a bound: a seeded [`PyRandom`], or
/// the system's generator when there is no seed.
pub(crate) trait Draws {
    /// A number below `n` (which is positive).
    fn below(&mut self, n: u64) -> u64;

    /// `randrange(start, stop, step)`; `None` for an empty range.
    fn randrange(&mut self, start: i64, stop: i64, step: i64) -> Option<i64> {
        // Python's `//`: the quotient rounded down.
        let floor_div = |a: i128, b: i128| {
            let q = a / b;
            if a % b != 0 && ((a < 0) != (b < 0)) {
                q - 1
            } else {
                q
            }
        };
        let width = i128::from(stop) - i128::from(start);
        let count = match i128::from(step) {
            0 => return None,
            s if s > 0 => floor_div(width + s - 1, s),
            s => floor_div(width + s + 1, s),
        };
        let count = u64::try_from(count).ok().filter(|c| *c > 0)?;
        Some(start + step * self.below(count) as i64)
    }

    /// `choice(items)`'s index; `None` for no items.
    fn choice(&mut self, len: usize) -> Option<usize> {
        (len > 0).then(|| self.below(len as u64) as usize)
    }

    /// `shuffle(items)`, in place.
    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

impl Draws for PyRandom {
    /// `_randbelow(n)`: `getrandbits` of `n`'s width until one is below it.
    fn below(&mut self, n: u64) -> u64 {
        let k = 64 - n.leading_zeros();
        loop {
            let r = self.bits(k);
            if r < n {
                return r;
            }
        }
    }
}

/// A seeded generator, or the system's.
pub(crate) enum Generator {
    /// `Random(seed)`.
    Seeded(Box<PyRandom>),
    /// No seed: Python's `SystemRandom`.
    System(rand::rngs::ThreadRng),
}

impl Draws for Generator {
    fn below(&mut self, n: u64) -> u64 {
        use rand::RngExt;
        match self {
            Generator::Seeded(rng) => rng.below(n),
            Generator::System(rng) => rng.random_range(0..n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Draws, PyRandom};

    /// Values Python 3.11 gives for the same seeds and draws.
    #[test]
    fn draws_as_python() {
        assert_eq!(PyRandom::from_int(1337).randrange(0, 2, 1), Some(1));
        assert_eq!(PyRandom::from_text("web1").randrange(0, 60, 1), Some(52));
        assert_eq!(PyRandom::from_int(42).randrange(10, 20, 2), Some(10));
        let mut items = [1, 2, 3, 4, 5];
        PyRandom::from_int(1337).shuffle(&mut items);
        assert_eq!(items, [2, 1, 4, 3, 5]);
        assert_eq!(PyRandom::from_text("x").choice(10), Some(5));
        assert_eq!(
            PyRandom::from_int(0).randrange(0, 1 << 40, 1),
            Some(849_735_321_549)
        );
        assert_eq!(PyRandom::from_int(5).randrange(0, 0, 1), None);
        assert_eq!(PyRandom::from_int(7).randrange(10, 0, -2), Some(6));
    }
}
