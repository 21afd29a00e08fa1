//! A safe face on the parts of libotf2's writer API the export uses: an archive opened for
//! writing, one event writer per location, and the global definitions.

use super::ffi;
use std::collections::HashMap;
use std::ffi::{c_void, CStr, CString};
use std::path::Path;

/// An OTF2 error code as a message naming the call that failed.
fn check(code: ffi::OTF2_ErrorCode, what: &str) -> Result<(), String> {
    if code == ffi::OTF2_SUCCESS {
        return Ok(());
    }
    // SAFETY: OTF2_Error_GetName and GetDescription return static strings for every code.
    let (name, description) = unsafe {
        (
            CStr::from_ptr(ffi::OTF2_Error_GetName(code)),
            CStr::from_ptr(ffi::OTF2_Error_GetDescription(code)),
        )
    };
    Err(format!(
        "OTF2 {what} failed: {} ({})",
        name.to_string_lossy(),
        description.to_string_lossy()
    ))
}

/// libotf2's error callback: quiet (the error comes back as the call's result, which the
/// export reports in one line).
unsafe extern "C" fn quiet(
    _user: *mut c_void,
    _file: *const std::ffi::c_char,
    _line: u64,
    _function: *const std::ffi::c_char,
    code: ffi::OTF2_ErrorCode,
    _format: *const std::ffi::c_char,
    _va: *mut ffi::__va_list_tag,
) -> ffi::OTF2_ErrorCode {
    code
}

unsafe extern "C" fn pre_flush(
    _user: *mut c_void,
    _file: ffi::OTF2_FileType,
    _location: ffi::OTF2_LocationRef,
    _caller: *mut c_void,
    _final: bool,
) -> ffi::OTF2_FlushType {
    ffi::OTF2_FLUSH as _
}

unsafe extern "C" fn post_flush(
    _user: *mut c_void,
    _file: ffi::OTF2_FileType,
    _location: ffi::OTF2_LocationRef,
) -> ffi::OTF2_TimeStamp {
    0
}

static FLUSH: ffi::OTF2_FlushCallbacks = ffi::OTF2_FlushCallbacks {
    otf2_pre_flush: Some(pre_flush),
    otf2_post_flush: Some(post_flush),
};

/// An archive being written: `DIR/traces.otf2`, `DIR/traces.def`, `DIR/traces/`.
pub struct Archive {
    raw: *mut ffi::OTF2_Archive,
    writers: HashMap<u64, *mut ffi::OTF2_EvtWriter>,
    /// Events written per location, as each closed writer reported.
    pub events: HashMap<u64, u64>,
}

impl Archive {
    /// Creates the archive in `dir`, a new or empty directory, with its creator and
    /// description.
    pub fn create(dir: &Path, creator: &str, description: &str) -> Result<Archive, String> {
        if std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some()) {
            return Err(format!(
                "{} is not empty: give a new directory for the OTF2 archive",
                dir.display()
            ));
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        // SAFETY: registers a function that only returns its argument.
        unsafe { ffi::OTF2_Error_RegisterCallback(Some(quiet), std::ptr::null_mut()) };
        let path = CString::new(dir.as_os_str().as_encoded_bytes())
            .map_err(|_| format!("{}: a path with a NUL byte", dir.display()))?;
        // SAFETY: valid C strings; the archive is closed in Drop.
        let raw = unsafe {
            ffi::OTF2_Archive_Open(
                path.as_ptr(),
                c"traces".as_ptr(),
                ffi::OTF2_FILEMODE_WRITE as _,
                1024 * 1024,
                4 * 1024 * 1024,
                ffi::OTF2_SUBSTRATE_POSIX as _,
                ffi::OTF2_COMPRESSION_NONE as _,
            )
        };
        if raw.is_null() {
            return Err(format!(
                "cannot create an OTF2 archive in {}",
                dir.display()
            ));
        }
        let archive = Archive {
            raw,
            writers: HashMap::new(),
            events: HashMap::new(),
        };
        let creator = CString::new(creator).unwrap_or_default();
        let description = CString::new(description.replace('\0', "")).unwrap_or_default();
        // SAFETY: `raw` is an open archive; FLUSH is static.
        unsafe {
            check(
                ffi::OTF2_Archive_SetFlushCallbacks(raw, &FLUSH, std::ptr::null_mut()),
                "SetFlushCallbacks",
            )?;
            check(
                ffi::OTF2_Archive_SetSerialCollectiveCallbacks(raw),
                "SetSerialCollectiveCallbacks",
            )?;
            check(
                ffi::OTF2_Archive_SetCreator(raw, creator.as_ptr()),
                "SetCreator",
            )?;
            check(
                ffi::OTF2_Archive_SetDescription(raw, description.as_ptr()),
                "SetDescription",
            )?;
            check(ffi::OTF2_Archive_OpenEvtFiles(raw), "OpenEvtFiles")?;
        }
        Ok(archive)
    }

    /// The event writer of `location`, opened on first use.
    pub fn writer(&mut self, location: u64) -> Result<*mut ffi::OTF2_EvtWriter, String> {
        if let Some(&w) = self.writers.get(&location) {
            return Ok(w);
        }
        // SAFETY: an open archive with its event files open.
        let w = unsafe { ffi::OTF2_Archive_GetEvtWriter(self.raw, location) };
        if w.is_null() {
            return Err(format!(
                "OTF2 could not open the events of location {location}"
            ));
        }
        self.writers.insert(location, w);
        Ok(w)
    }

    /// Closes every open event writer (a rank is done), noting its event count.
    pub fn close_writers(&mut self) -> Result<(), String> {
        for (location, w) in std::mem::take(&mut self.writers) {
            let mut n = 0u64;
            // SAFETY: `w` is an open writer of this archive, closed once.
            unsafe {
                check(
                    ffi::OTF2_EvtWriter_GetNumberOfEvents(w, &mut n),
                    "GetNumberOfEvents",
                )?;
                check(
                    ffi::OTF2_Archive_CloseEvtWriter(self.raw, w),
                    "CloseEvtWriter",
                )?;
            }
            self.events.insert(location, n);
        }
        Ok(())
    }

    /// Ends the events and writes the (empty) local definitions of every location, then
    /// hands out the global definition writer.
    pub fn finish_events(&mut self) -> Result<*mut ffi::OTF2_GlobalDefWriter, String> {
        self.close_writers()?;
        let mut locations: Vec<u64> = self.events.keys().copied().collect();
        locations.sort_unstable();
        // SAFETY: an open archive; every event writer is closed.
        unsafe {
            check(ffi::OTF2_Archive_CloseEvtFiles(self.raw), "CloseEvtFiles")?;
            check(ffi::OTF2_Archive_OpenDefFiles(self.raw), "OpenDefFiles")?;
            for l in locations {
                let d = ffi::OTF2_Archive_GetDefWriter(self.raw, l);
                if d.is_null() {
                    return Err(format!(
                        "OTF2 could not open the definitions of location {l}"
                    ));
                }
                check(
                    ffi::OTF2_Archive_CloseDefWriter(self.raw, d),
                    "CloseDefWriter",
                )?;
            }
            check(ffi::OTF2_Archive_CloseDefFiles(self.raw), "CloseDefFiles")?;
            let g = ffi::OTF2_Archive_GetGlobalDefWriter(self.raw);
            if g.is_null() {
                return Err("OTF2 could not open the global definitions".into());
            }
            Ok(g)
        }
    }

    /// Closes the archive, writing everything out.
    pub fn close(mut self) -> Result<(), String> {
        let raw = std::mem::replace(&mut self.raw, std::ptr::null_mut());
        // SAFETY: `raw` is open and closed once.
        check(unsafe { ffi::OTF2_Archive_Close(raw) }, "Archive_Close")
    }
}

impl Drop for Archive {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: an archive left open by an error: closed once.
            unsafe { ffi::OTF2_Archive_Close(self.raw) };
        }
    }
}

/// Strings of the global definitions, numbered as first used.
#[derive(Default)]
pub struct Strings {
    ids: HashMap<String, u32>,
    list: Vec<String>,
}

impl Strings {
    /// The id of `s`.
    pub fn id(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.list.len() as u32;
        self.ids.insert(s.to_string(), id);
        self.list.push(s.to_string());
        id
    }

    /// Writes every string definition.
    pub fn write(&self, g: *mut ffi::OTF2_GlobalDefWriter) -> Result<(), String> {
        for (id, s) in self.list.iter().enumerate() {
            let c = CString::new(s.replace('\0', "")).unwrap_or_default();
            // SAFETY: `g` is the archive's open global definition writer.
            check(
                unsafe { ffi::OTF2_GlobalDefWriter_WriteString(g, id as u32, c.as_ptr()) },
                "WriteString",
            )?;
        }
        Ok(())
    }
}

/// Checks an OTF2 call's result (for the event and definition writers' calls).
pub fn checked(code: ffi::OTF2_ErrorCode, what: &str) -> Result<(), String> {
    check(code, what)
}
