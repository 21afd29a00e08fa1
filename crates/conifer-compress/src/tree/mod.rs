//! CYPRESS's compressed trace tree (Zhai et al., SC'14, §IV): the structure tree of the
//! program with, per vertex, the runtime record of what happened there. [`TreeBuilder`] fills
//! it while the program runs, [`TreeRecord`] is the finished record of one thread, and
//! [`Expand`] walks it back into the thread's terminals in call order.

mod builder;
mod expand;
mod record;
mod series;
mod shape;

pub use builder::TreeBuilder;
pub use expand::Expand;
pub use record::{validate, RecordSummary, TreeRecord, VertexRecord, MAX_ACTIVATIONS};
pub use series::builder::SeriesBuilder;
pub use series::{Run, Segment, Series, SeriesIter, Summary};
pub use shape::{Shape, VertexKind, MAX_VERTICES};

#[cfg(test)]
mod tests;
