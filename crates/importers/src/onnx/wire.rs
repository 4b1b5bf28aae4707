//! The protobuf wire format, just enough to walk ONNX messages: a message is a sequence of
//! `(tag, value)` with tag = field number << 3 | wire type, where wire type 0 is a varint,
//! 1 eight bytes, 2 a varint length then that many bytes, 5 four bytes.

/// A malformed message: where (absolute byte offset in the file, message type) and what.
#[derive(Debug)]
pub(super) struct WireError {
    pub offset: usize,
    pub message: &'static str,
    pub what: String,
}

#[derive(Debug, Clone, Copy)]
enum Value<'a> {
    Varint(u64),
    Fixed64(u64),
    /// A length-delimited payload and its absolute offset.
    Bytes(&'a [u8], usize),
    Fixed32(u32),
}

/// One field of a message: its number, value and position.
pub(super) struct Field<'a> {
    pub number: u32,
    value: Value<'a>,
    /// Absolute offset of the field's tag.
    pub offset: usize,
    message: &'static str,
}

/// The fields of one message, in file order; iteration stops after the first error.
pub(super) struct Fields<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// Absolute offset of `bytes[0]` in the file.
    base: usize,
    /// The message type being read.
    message: &'static str,
}

impl<'a> Fields<'a> {
    pub fn new(bytes: &'a [u8], base: usize, message: &'static str) -> Self {
        Self {
            bytes,
            pos: 0,
            base,
            message,
        }
    }

    fn fail(&self, at: usize, what: String) -> WireError {
        WireError {
            offset: self.base + at,
            message: self.message,
            what,
        }
    }

    fn varint(&mut self) -> Result<u64, WireError> {
        let start = self.pos;
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let Some(&byte) = self.bytes.get(self.pos) else {
                return Err(self.fail(start, "truncated varint: the data ends inside it".into()));
            };
            self.pos += 1;
            value |= u64::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(self.fail(start, "varint longer than 10 bytes".into()))
    }

    fn take(&mut self, n: u64, number: u32) -> Result<(&'a [u8], usize), WireError> {
        let start = self.pos;
        let left = self.bytes.len() - start;
        let n = usize::try_from(n)
            .ok()
            .filter(|&n| n <= left)
            .ok_or_else(|| {
                self.fail(
                    start,
                    format!("truncated: field {number} needs {n} bytes but only {left} remain"),
                )
            })?;
        self.pos += n;
        Ok((&self.bytes[start..start + n], self.base + start))
    }

    fn field(&mut self) -> Result<Field<'a>, WireError> {
        let start = self.pos;
        let tag = self.varint()?;
        let number = u32::try_from(tag >> 3)
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| self.fail(start, format!("invalid field number {}", tag >> 3)))?;
        let value = match tag & 7 {
            0 => Value::Varint(self.varint()?),
            1 => Value::Fixed64(u64::from_le_bytes(fixed(self.take(8, number)?.0))),
            2 => {
                let len = self.varint()?;
                let (bytes, at) = self.take(len, number)?;
                Value::Bytes(bytes, at)
            }
            5 => Value::Fixed32(u32::from_le_bytes(fixed(self.take(4, number)?.0))),
            wire => {
                return Err(self.fail(
                    start,
                    format!(
                        "unknown wire type {wire} in field {number} (expected 0, 1, 2 or 5; \
                         ONNX uses no groups)"
                    ),
                ));
            }
        };
        Ok(Field {
            number,
            value,
            offset: self.base + start,
            message: self.message,
        })
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<Field<'a>, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.bytes.len() {
            return None;
        }
        let item = self.field();
        if item.is_err() {
            // The rest of the message cannot be framed.
            self.pos = self.bytes.len();
        }
        Some(item)
    }
}

fn fixed<const N: usize>(bytes: &[u8]) -> [u8; N] {
    std::array::from_fn(|i| bytes[i])
}

/// Typed views of a field, failing with the field's position when the wire type is wrong.
impl<'a> Field<'a> {
    fn wrong(&self, expected: &str) -> WireError {
        WireError {
            offset: self.offset,
            message: self.message,
            what: format!("field {} should be {expected}", self.number),
        }
    }

    pub fn varint(&self) -> Result<u64, WireError> {
        match self.value {
            Value::Varint(v) => Ok(v),
            _ => Err(self.wrong("a varint")),
        }
    }

    pub fn bytes(&self) -> Result<&'a [u8], WireError> {
        match self.value {
            Value::Bytes(bytes, _) => Ok(bytes),
            _ => Err(self.wrong("length-delimited")),
        }
    }

    pub fn string(&self) -> Result<String, WireError> {
        Ok(String::from_utf8_lossy(self.bytes()?).into_owned())
    }

    pub fn f32(&self) -> Result<f32, WireError> {
        match self.value {
            Value::Fixed32(bits) => Ok(f32::from_bits(bits)),
            _ => Err(self.wrong("a 32-bit float")),
        }
    }

    /// The payload as an embedded message of type `message`.
    pub fn message(&self, message: &'static str) -> Result<Fields<'a>, WireError> {
        match self.value {
            Value::Bytes(bytes, at) => Ok(Fields::new(bytes, at, message)),
            _ => Err(self.wrong(&format!("an embedded {message}"))),
        }
    }

    /// Appends a repeated varint field, packed (one length-delimited run) or not.
    pub fn push_varints(&self, out: &mut Vec<u64>) -> Result<(), WireError> {
        match self.value {
            Value::Varint(v) => out.push(v),
            Value::Bytes(bytes, at) => {
                let mut run = Fields::new(bytes, at, self.message);
                while run.pos < bytes.len() {
                    out.push(run.varint()?);
                }
            }
            _ => return Err(self.wrong("varints")),
        }
        Ok(())
    }

    /// Appends a repeated fixed-width field of `N` = 4 or 8 bytes, packed or not.
    pub fn push_fixed<const N: usize>(&self, out: &mut Vec<[u8; N]>) -> Result<(), WireError> {
        match self.value {
            Value::Fixed32(v) if N == 4 => out.push(fixed(&v.to_le_bytes())),
            Value::Fixed64(v) if N == 8 => out.push(fixed(&v.to_le_bytes())),
            Value::Bytes(bytes, _) if bytes.len() % N == 0 => {
                out.extend(bytes.chunks_exact(N).map(fixed));
            }
            _ => return Err(self.wrong(&format!("packed {N}-byte values"))),
        }
        Ok(())
    }
}
