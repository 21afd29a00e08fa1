//! A call's arguments by parameter name.

use conifer_trace::value::Value;

/// One signature's values with the names of their parameters.
#[derive(Clone, Copy)]
pub struct Args<'a> {
    /// The function's C name (`MPI_Isend`).
    pub name: &'a str,
    /// Parameter names, in value order.
    pub slots: &'a [String],
    /// The values.
    pub values: &'a [Value],
}

impl<'a> Args<'a> {
    /// The value of parameter `slot`.
    pub fn get(&self, slot: &str) -> Option<&'a Value> {
        let i = self.slots.iter().position(|s| s == slot)?;
        self.values.get(i)
    }

    /// The value of parameter `slot` as a non-negative integer.
    pub fn int(&self, slot: &str) -> Option<u64> {
        match self.get(slot)? {
            Value::Int(v) => u64::try_from(*v).ok(),
            _ => None,
        }
    }

    /// The value of parameter `slot` as an array of non-negative integers.
    pub fn ints(&self, slot: &str) -> Option<Vec<u64>> {
        match self.get(slot)? {
            Value::Array(items) => items
                .iter()
                .map(|v| match v {
                    Value::Int(v) => u64::try_from(*v).ok(),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    }
}
