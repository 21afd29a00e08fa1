//! The objects a call names, creates, frees and completes: handle arrays, new handles,
//! groups, windows and communicators (with their agreed ids), requests and statuses.

use super::*;

impl Call<'_> {
    /// An array of input handles.
    ///
    /// # Safety
    /// `ptr` is null or points to `len` readable handles.
    pub unsafe fn handles<H: HandleBits>(&mut self, kind: HandleKind, ptr: *const H, len: usize) {
        if ptr.is_null() {
            return self.ignored();
        }
        self.array(len, |c, i| c.handle(kind, (*ptr.add(i)).bits()));
    }

    /// In-out handles (requests to complete, objects to free): records them and remembers
    /// their values so that [`Call::release_completed`] can tell which ones MPI released.
    ///
    /// # Safety
    /// `ptr` is null or points to `len` readable handles.
    pub unsafe fn handles_before<H: HandleBits>(
        &mut self,
        kind: HandleKind,
        ptr: *const H,
        len: usize,
        array: bool,
    ) {
        self.saved.clear();
        if ptr.is_null() {
            return self.ignored();
        }
        self.saved.extend((0..len).map(|i| (*ptr.add(i)).bits()));
        if array {
            encode_array_header(self.sig, len);
        }
        for i in 0..if array { len } else { len.min(1) } {
            let bits = self.saved[i];
            let h = if kind == HandleKind::Request {
                let st = locked_state(&mut self.state);
                let saved = &*self.saved;
                let occurrence = || saved[..i].iter().filter(|&&b| b == bits).count();
                match st.requests.nth(bits, occurrence) {
                    Some(live) => {
                        self.request_comm = self.request_comm.or(live.comm);
                        HandleRef::Id(live.id)
                    }
                    None => self.handle_ref(kind, bits),
                }
            } else {
                self.handle_ref(kind, bits)
            };
            encode_handle(self.sig, kind, h);
        }
        if !array && len == 0 {
            self.ignored();
        }
    }

    /// After the call: the in-out handles MPI set to the null handle were completed or freed.
    ///
    /// # Safety
    /// `ptr` is null or points to `len` readable handles.
    pub unsafe fn release_completed<H: HandleBits>(
        &mut self,
        kind: HandleKind,
        ptr: *const H,
        len: usize,
    ) {
        if ptr.is_null() {
            return;
        }
        let st = locked_state(&mut self.state);
        for (i, before) in self.saved.iter().enumerate().take(len) {
            let now = (*ptr.add(i)).bits();
            let became_null = st.handles.is_null(kind, now) && !st.handles.is_null(kind, *before);
            if !became_null {
                continue;
            }
            if kind != HandleKind::Request {
                st.tables_changed();
            }
            match kind {
                HandleKind::Request => st.requests.complete(*before),
                HandleKind::Comm => {
                    if let Some(c) = st.comms.as_mut() {
                        c.release(*before)
                    }
                }
                _ => st.handles.release(kind, *before),
            }
        }
    }

    /// A handle MPI returned: existing id, or a new one.
    ///
    /// # Safety
    /// `ptr` is null or points to a readable handle.
    pub unsafe fn new_handle<H: HandleBits>(&mut self, kind: HandleKind, ptr: *const H) {
        if ptr.is_null() {
            return self.ignored();
        }
        self.st().tables_changed();
        let h = self.st().handles.register(kind, (*ptr).bits());
        encode_handle(self.sig, kind, h);
    }

    /// A group MPI created: an id like any handle, plus the caller's rank in it, so ranks of
    /// the group are recorded relative to it.
    ///
    /// # Safety
    /// `ptr` is null or points to a group handle MPI just wrote.
    pub unsafe fn new_group<G: GroupHandle>(&mut self, ptr: *const G) {
        if ptr.is_null() {
            return self.ignored();
        }
        self.st().tables_changed();
        let bits = (*ptr).bits();
        let group = (*ptr).group();
        let h = self.st().handles.register(HandleKind::Group, bits);
        encode_handle(self.sig, HandleKind::Group, h);
        let (mut rank, mut size) = (0, 0);
        if PMPI_Group_rank(group, &mut rank) != 0 || PMPI_Group_size(group, &mut size) != 0 {
            return;
        }
        if rank != conifer_undefined() {
            if let Some(comms) = self.st().comms.as_mut() {
                comms.insert_group(HandleKind::Group, bits, h, rank.into(), size.into());
            }
        }
    }

    /// A window MPI created: an id like any handle, plus the caller's rank in the window's
    /// group, so the target ranks of one-sided calls are recorded relative to it.
    ///
    /// # Safety
    /// `ptr` is null or points to a window handle MPI just wrote.
    pub unsafe fn new_window<W: WindowHandle>(&mut self, ptr: *const W) {
        if ptr.is_null() {
            return self.ignored();
        }
        self.st().tables_changed();
        let bits = (*ptr).bits();
        let h = self.st().handles.register(HandleKind::Win, bits);
        encode_handle(self.sig, HandleKind::Win, h);
        let mut group = std::mem::zeroed();
        if PMPI_Win_get_group((*ptr).window(), &mut group) != 0 {
            return;
        }
        let (mut rank, mut size) = (0, 0);
        let known =
            PMPI_Group_rank(group, &mut rank) == 0 && PMPI_Group_size(group, &mut size) == 0;
        PMPI_Group_free(&mut group);
        if known && rank != conifer_undefined() {
            if let Some(comms) = self.st().comms.as_mut() {
                comms.insert_group(HandleKind::Win, bits, h, rank.into(), size.into());
            }
        }
    }

    /// Handles MPI returned in an array.
    ///
    /// # Safety
    /// `ptr` is null or points to `len` readable handles.
    pub unsafe fn new_handles<H: HandleBits>(
        &mut self,
        kind: HandleKind,
        ptr: *const H,
        len: usize,
    ) {
        if ptr.is_null() {
            return self.ignored();
        }
        self.st().tables_changed();
        self.array(len, |c, i| {
            let h = c.st().handles.register(kind, (*ptr.add(i)).bits());
            encode_handle(c.sig, kind, h);
        });
    }

    /// A communicator MPI created: its id is agreed with all members (a collective over it).
    ///
    /// # Safety
    /// `ptr` is null or points to a communicator every member is receiving from the same call.
    pub unsafe fn new_comm<C: CommHandle>(&mut self, ptr: *const C) {
        if ptr.is_null() {
            return self.ignored();
        }
        let comm = (*ptr).comm();
        let bits = comms::comm_bits(comm);
        if bits == comms::comm_bits(conifer_comm_null()) {
            return encode_handle(self.sig, HandleKind::Comm, HandleRef::Named(0));
        }
        let standing = comms::standing(comm);
        let (offer, fallback) = match self.st().comms.as_ref() {
            Some(c) => (c.offer(&standing), c.fallback_id()),
            None => return self.local_comm(&comm),
        };
        // The agreement is a collective: never hold the lock across it.
        self.state = None;
        let agreed = comms::agree(comm, offer, fallback);
        self.state = Some(lock());
        let comms = self
            .st()
            .comms
            .as_mut()
            .expect("comms exist after MPI_Init");
        let h = match agreed {
            Some(id) => comms.insert_agreed(comm, id, standing),
            None => comms.insert_local(comm),
        };
        self.st().tables_changed();
        encode_handle(self.sig, HandleKind::Comm, h);
    }

    /// The communicator `MPI_Comm_idup` creates from `parent`: it cannot be used, so not agreed
    /// on, before the request completes, but all members duplicate a communicator in the same
    /// order, so its id is derived from the parent's and the duplicate's number, identically on
    /// every member; rank, size and topology are the parent's.
    ///
    /// # Safety
    /// `ptr` is null or points to a communicator handle.
    pub unsafe fn idup_comm<C: CommHandle>(&mut self, ptr: *const C, parent: Option<u64>) {
        if ptr.is_null() {
            return self.ignored();
        }
        self.st().tables_changed();
        let comm = (*ptr).comm();
        let h = match (self.st().comms.as_mut(), parent) {
            (Some(c), Some(parent)) => c.insert_duplicate(comm, parent),
            (Some(c), None) => c.insert_local(comm),
            (None, _) => HandleRef::Unknown,
        };
        encode_handle(self.sig, HandleKind::Comm, h);
    }

    /// A communicator whose id cannot be agreed at creation (`MPI_Comm_get_parent`).
    ///
    /// # Safety
    /// `ptr` is null or points to a communicator handle.
    pub unsafe fn local_comm<C: CommHandle>(&mut self, ptr: *const C) {
        if ptr.is_null() {
            return self.ignored();
        }
        self.st().tables_changed();
        let h = match self.st().comms.as_mut() {
            Some(c) => c.insert_local((*ptr).comm()),
            None => HandleRef::Unknown,
        };
        encode_handle(self.sig, HandleKind::Comm, h);
    }

    /// A request MPI created: an id from the pool of this call's signature, made at its call
    /// site when the program announced one. Every pool then belongs to one call site
    /// (CYPRESS maps each request to its creating call site, so the calls completing it name
    /// that site) and still repeats whatever order requests complete in.
    ///
    /// # Safety
    /// `ptr` is null or points to a request handle.
    pub unsafe fn new_request<H: HandleBits>(&mut self, ptr: *const H, comm: Option<u64>) {
        if ptr.is_null() {
            return self.ignored();
        }
        let bits = (*ptr).bits();
        if let Some(code) = self.st().handles.named(HandleKind::Request, bits) {
            return encode_handle(self.sig, HandleKind::Request, HandleRef::Named(code));
        }
        let signature = word_hash::hash_bytes(self.sig);
        let creator = match Some(self.site).filter(|&s| s != NO_SITE) {
            Some(site) => signature ^ (u64::from(site) + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15),
            None => signature,
        };
        let wildcard = self.wildcard;
        let id = self.st().requests.create(creator, bits, comm, wildcard);
        encode_handle(self.sig, HandleKind::Request, HandleRef::Id(id));
    }

    /// The call posts a receive with a wildcard source or tag: the request it creates is
    /// marked, so completion calls record the statuses the program ignores.
    pub fn mark_wildcard(&mut self) {
        self.wildcard = true;
    }

    unsafe fn status_value(&mut self, status: MPI_Status, comm: Option<u64>) -> Status {
        let s = &status;
        let mut count: c_int = 0;
        let bytes = if PMPI_Get_count(s, conifer_type_byte(), &mut count) == 0 {
            count
        } else {
            -1
        };
        let context = comm.or(self.request_comm);
        // A file operation's status has no message: its source and tag are undefined (and
        // differ between ranks and runs), so they are recorded as UNDEFINED and 0.
        let (source, tag) = match context {
            Some(FILE_IO) => (Rank::Undefined, 0),
            _ => (
                self.rank_value(s.MPI_SOURCE.into(), context),
                s.MPI_TAG.into(),
            ),
        };
        Status {
            source,
            tag,
            // MPI sets a status's MPI_ERROR only when the call returns MPI_ERR_IN_STATUS;
            // elsewhere it is undefined (often stack garbage) and recorded as 0.
            error: if self.returned == *ERR_IN_STATUS {
                s.MPI_ERROR.into()
            } else {
                0
            },
            bytes: bytes.into(),
        }
    }

    /// A status output.
    ///
    /// # Safety
    /// `ptr` is null, the status-ignore sentinel, or a status MPI filled in.
    pub unsafe fn status<S: StatusSlot>(&mut self, ptr: *const S, comm: Option<u64>) {
        match S::read(ptr) {
            Some(status) => {
                let s = self.status_value(status, comm);
                encode_status(self.sig, &s);
            }
            None => self.ignored(),
        }
    }

    /// An array of statuses.
    ///
    /// # Safety
    /// `ptr` is null, the statuses-ignore sentinel, or `len` statuses MPI filled in.
    pub unsafe fn statuses<S: StatusSlot>(&mut self, ptr: *const S, len: usize, comm: Option<u64>) {
        if ptr.is_null() || S::is_ignore_array(ptr) {
            return self.ignored();
        }
        self.array(len, |c, i| match S::read(ptr.add(i)) {
            Some(status) => {
                let s = c.status_value(status, comm);
                encode_status(c.sig, &s);
            }
            None => c.ignored(),
        });
    }
}
