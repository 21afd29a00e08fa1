//! A signature parsed: the function, thread, call site and argument values one signature's
//! bytes hold.

use crate::caller::Caller;
use crate::value::{HandleKind, HandleRef, Value};
use crate::varint::{put_u64, Reader};

/// A parsed signature.
#[derive(Debug, Clone, PartialEq)]
pub struct Signature {
    /// Function id (index into the catalog).
    pub function: u16,
    /// Symbolic thread.
    pub thread: u32,
    /// Where the call was made, when recorded with `--callsites`.
    pub caller: Option<Caller>,
    /// Recorded values, in slot order.
    pub values: Vec<Value>,
    /// The function's return value.
    pub ret: i64,
}

impl Signature {
    /// Parses signature bytes; `None` when malformed.
    pub fn parse(bytes: &[u8]) -> Option<Signature> {
        let mut r = Reader::new(bytes);
        let function = u16::try_from(r.u64()?).ok()?;
        let thread = r.u32()?;
        let caller = Caller::decode_if_present(&mut r)?;
        let mut values = Vec::new();
        while r.remaining() > 0 {
            values.push(Value::decode(&mut r)?);
        }
        let ret = match values.pop()? {
            Value::Int(v) => v,
            _ => return None,
        };
        Some(Signature {
            function,
            thread,
            caller,
            values,
            ret,
        })
    }

    pub fn comm(&self) -> Option<&Value> {
        self.values.iter().find(|v| is_context(v))
    }

    /// For each value, the communicator or group its ranks are relative to, as the recorder
    /// chose it: the nearest one before the value, else the first one of the call.
    pub fn contexts(&self) -> Vec<Option<&Value>> {
        let first = self.comm();
        let mut nearest = None;
        self.values
            .iter()
            .map(|v| {
                let context = nearest.or(first);
                if is_context(v) {
                    nearest = Some(v);
                }
                context
            })
            .collect()
    }

    pub fn requests(&self) -> impl Iterator<Item = HandleRef> + '_ {
        self.values.iter().flat_map(|v| match v {
            Value::Handle(HandleKind::Request, h) => vec![*h],
            Value::Array(items) => items
                .iter()
                .filter_map(|i| match i {
                    Value::Handle(HandleKind::Request, h) => Some(*h),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        })
    }
}

/// True for the values ranks can be relative to: communicators, groups and windows (the
/// target ranks of one-sided calls are ranks in the window's group).
pub fn is_context(v: &Value) -> bool {
    matches!(
        v,
        Value::Handle(HandleKind::Comm | HandleKind::Group | HandleKind::Win, _)
    )
}

/// The bytes of `signature`.
pub fn encode_signature(signature: &Signature) -> Vec<u8> {
    let mut out = Vec::new();
    put_u64(&mut out, signature.function.into());
    put_u64(&mut out, signature.thread.into());
    if let Some(caller) = &signature.caller {
        caller.encode(&mut out);
    }
    signature.values.iter().for_each(|v| v.encode(&mut out));
    Value::Int(signature.ret).encode(&mut out);
    out
}
