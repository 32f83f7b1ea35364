//! A file written atomically: the bytes go to a temporary file beside the destination, renamed
//! into place on commit and removed when dropped uncommitted or when the process is interrupted;
//! also standard output, and devices or open files' names written in place. Every output file of
//! cqlwire writes (its commands' and its Python module's) goes through [`Output`].

use crate::{named, Destination};
use std::fs::{self, File, Permissions};
use std::io::{self, BufWriter, IsTerminal, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

#[cfg(unix)]
use crate::interrupt;

/// Without signals to catch, a temporary file left by an interrupted run waits for the next run's
/// clean-up.
#[cfg(not(unix))]
mod interrupt {
    /// Nothing to register.
    pub(crate) struct Registration;

    impl Registration {
        pub(crate) fn new(_path: &std::path::Path) -> Registration {
            Registration
        }
    }
}

/// Size of the write buffer in front of every output.
const WRITE_BUFFER: usize = 1 << 20;

/// Start of a temporary output file's name; the writing process's id and a random part follow.
const TEMP_PREFIX: &str = ".cqlwire-";
/// End of a temporary output file's name.
const TEMP_SUFFIX: &str = ".tmp";
/// Mode of a new output file before the umask applies (as `cp` and shell redirection create files).
const NEW_FILE_MODE: u32 = 0o666;

/// Why an output could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// Binary output was requested while standard output is a terminal.
    #[error(
        "refusing to write binary output to a terminal (write to a file, or use a text format)"
    )]
    BinaryToTerminal,
    /// The temporary file beside the destination could not be created (no such folder, no
    /// permission, ...).
    #[error("cannot create {path}: {source}")]
    Create {
        /// The destination as given.
        path: PathBuf,
        /// What the operating system said.
        source: io::Error,
    },
    /// The destination is a directory.
    #[error("the output {path} is a directory; name a file in it")]
    Directory {
        /// The destination.
        path: PathBuf,
    },
    /// An existing device, named pipe or special name could not be opened for writing in place.
    #[error("cannot open {path} for writing: {source}")]
    Open {
        /// The destination.
        path: PathBuf,
        /// What the operating system said.
        source: io::Error,
    },
    /// The output is the input file itself (same device and inode), which writing would destroy.
    #[error("{which}; write the output to another file")]
    SameFile {
        /// Which names are the same file, e.g. `data.bin is both the input and the output`.
        which: String,
    },
}

/// Refuses an output that is the input file itself: the input's name (or a link to it) given as
/// the output, or standard output redirected to the input. Either side may be standard
/// input/output (`-` or `None`). Only regular files are compared, by device and inode.
pub fn refuse_same_file(input: Option<&Path>, output: Option<&Path>) -> Result<(), OutputError> {
    let input_id = file_identity(named(input).unwrap_or(Path::new("/dev/stdin")));
    let output_id = file_identity(named(output).unwrap_or(Path::new("/dev/stdout")));
    if input_id.is_none() || input_id != output_id {
        return Ok(());
    }
    let input_name = named(input).map_or("standard input".into(), |p| p.display().to_string());
    let output_name = named(output).map_or("standard output".into(), |p| p.display().to_string());
    let which = if input_name == output_name {
        format!("{input_name} is both the input and the output")
    } else {
        format!("the output ({output_name}) and the input ({input_name}) are the same file")
    };
    Err(OutputError::SameFile { which })
}

/// Whether two output names lead to one file: the same existing file (a link, or another
/// spelling of its path), or for a name that does not exist yet, the same name in the same folder
/// (`out/a.npy` and `./out/a.npy`; a dangling link counts as the name it points to). Writing both
/// would leave one of the two outputs only. Standard output (`-`, `None`) is never a file here.
pub fn same_destination(first: Option<&Path>, second: Option<&Path>) -> bool {
    let (Some(first), Some(second)) = (named(first), named(second)) else {
        return false;
    };
    if first == second {
        return true;
    }
    if let (Some(a), Some(b)) = (file_identity(first), file_identity(second)) {
        return a == b;
    }
    match (destination(first), destination(second)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// Where writing `path` puts the bytes: the canonical path of what exists (links followed), else
/// the canonical folder joined with the name, after the links that lead nowhere yet. None when the
/// folder cannot be resolved (the write would fail anyway).
fn destination(path: &Path) -> Option<PathBuf> {
    if let Ok(existing) = fs::canonicalize(path) {
        return Some(existing);
    }
    let mut path = path.to_path_buf();
    // A dangling link is created at its target; a loop of links stops at the kernel's own limit.
    for _ in 0..40 {
        let Ok(target) = fs::read_link(&path) else {
            break;
        };
        path = path.parent().unwrap_or(Path::new("")).join(target);
    }
    let name = path.file_name()?.to_owned();
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    Some(fs::canonicalize(folder).ok()?.join(name))
}

/// The device and inode of a regular file (following links; `/dev/stdin` and `/dev/stdout` lead to
/// what the standard streams are), or None for anything else or when it cannot be known.
#[cfg(unix)]
fn file_identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let metadata = fs::metadata(path).ok()?;
    metadata.is_file().then(|| (metadata.dev(), metadata.ino()))
}

/// Without device and inode numbers, files are compared by canonical path.
#[cfg(not(unix))]
fn file_identity(path: &Path) -> Option<PathBuf> {
    fs::metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .and_then(|_| fs::canonicalize(path).ok())
}

/// A buffered output: standard output, a file written atomically, or a device written in place.
///
/// A file is written to a temporary file in the destination's folder and renamed into place by
/// [`Output::commit`]; dropping an `Output` without committing removes the temporary file and leaves
/// the destination as it was. The temporary file is named `.cqlwire-<pid>-<random>.tmp`. SIGINT,
/// SIGTERM and SIGHUP remove it before ending the process (a handler is installed for those of them
/// that are still at their default action when the first file output is opened); after SIGKILL, the
/// next run writing to that folder removes it. The committed file gets the mode of the file it
/// replaces, else `0o666` less the umask.
///
/// An existing destination that is not a regular file (`/dev/null`, a named pipe, a terminal), or a
/// name of an already open file (`/dev/stdout`, `/dev/fd/N`, `/proc/...`), is written in place:
/// renaming a file onto it would replace the device or the name instead of writing to it. Through a
/// symbolic link, the file it points to is replaced, or created when it does not exist yet.
///
/// Write errors name the destination (`cannot write out.bin: No space left on device`) and keep
/// their kind, so a closed pipe is still recognisable.
pub struct Output {
    target: Target,
    /// Whether [`Output::commit`] syncs the file to disk before the rename.
    sync: bool,
}

enum Target {
    Stdout(BufWriter<StdoutSink>),
    File {
        writer: BufWriter<tempfile::NamedTempFile>,
        destination: PathBuf,
        /// Declared after `writer`, so it is dropped after the file is removed or renamed.
        interrupt: interrupt::Registration,
    },
    InPlace {
        writer: BufWriter<File>,
        destination: PathBuf,
    },
}

/// Where buffered standard output goes: binary output straight to file descriptor 1 (on Unix), text
/// through [`io::Stdout`].
///
/// `io::Stdout` is line-buffered: each 1 MiB block of binary output was written as two system
/// calls, the bytes up to its last newline byte and then, from a buffer of its own, the few bytes
/// after it, so that every block but the first started inside a page of the destination. A
/// duplicate of the descriptor writes each block whole. Nothing else of the process writes binary
/// output to standard output meanwhile, so no bytes can be reordered.
enum StdoutSink {
    Std(io::Stdout),
    #[cfg(unix)]
    Raw(File),
}

impl StdoutSink {
    fn new(stdout: io::Stdout, binary: bool) -> StdoutSink {
        #[cfg(unix)]
        if binary {
            use std::os::fd::AsFd;
            if let Ok(fd) = stdout.as_fd().try_clone_to_owned() {
                return StdoutSink::Raw(File::from(fd));
            }
        }
        #[cfg(not(unix))]
        let _ = binary;
        StdoutSink::Std(stdout)
    }
}

impl Write for StdoutSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            StdoutSink::Std(stdout) => stdout.write(buf),
            #[cfg(unix)]
            StdoutSink::Raw(file) => file.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            StdoutSink::Std(stdout) => stdout.flush(),
            #[cfg(unix)]
            StdoutSink::Raw(file) => file.flush(),
        }
    }
}

impl Output {
    /// Opens standard output (`-` or no path), a temporary file beside `path`, or `path` itself for
    /// a device or an already open file (see [`Output`]).
    ///
    /// `binary` output is refused when it would go to a terminal; a directory is refused as a
    /// destination.
    pub fn open(path: Option<&Path>, binary: bool) -> Result<Self, OutputError> {
        let target = match named(path) {
            None => {
                let stdout = io::stdout();
                if binary && stdout.is_terminal() {
                    return Err(OutputError::BinaryToTerminal);
                }
                Target::Stdout(BufWriter::with_capacity(
                    WRITE_BUFFER,
                    StdoutSink::new(stdout, binary),
                ))
            }
            Some(p) => match fs::metadata(p) {
                Ok(existing) if existing.is_dir() => {
                    return Err(OutputError::Directory {
                        path: p.to_path_buf(),
                    })
                }
                Ok(existing) if !existing.is_file() || names_open_file(p) => {
                    open_in_place(p, binary)?
                }
                Ok(existing) => {
                    // Through a symbolic link, the file it points to is replaced, not the link.
                    let is_link = fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
                    let destination = if is_link {
                        fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
                    } else {
                        p.to_path_buf()
                    };
                    open_temporary(&destination, Some(existing.permissions()))?
                }
                // A dangling symbolic link: create the file it points to.
                Err(_) => open_temporary(&link_target(p), None)?,
            },
        };
        Ok(Output { target, sync: true })
    }

    /// Makes [`Output::commit`] skip the sync to disk before the rename: the rename stays atomic, but
    /// durability after a crash is left to the operating system, like `cp` or `cat > file`. For large
    /// outputs, where a sync costs far more than the writing (gigabytes at disk speed).
    pub fn without_sync(mut self) -> Self {
        self.sync = false;
        self
    }

    /// Whether [`Output::write_at`] works: a file, not standard output or a device, pipe or
    /// terminal written in place.
    pub fn can_rewrite(&self) -> bool {
        matches!(self.target, Target::File { .. })
    }

    /// Overwrites `bytes` at `offset` of an output file (after flushing what is buffered) and goes
    /// back to the end, e.g. to fix a header once the final size is known. Standard output and
    /// devices cannot seek: an error of kind `Unsupported`.
    pub fn write_at(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        let result = match &mut self.target {
            Target::Stdout(_) | Target::InPlace { .. } => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "only a regular file can be rewritten",
            )),
            Target::File { writer, .. } => (|| {
                writer.flush()?;
                let file = writer.get_mut();
                file.seek(SeekFrom::Start(offset))?;
                file.write_all(bytes)?;
                file.seek(SeekFrom::End(0))?;
                Ok(())
            })(),
        };
        result.map_err(|e| self.write_error(e))
    }

    /// Flushes everything and, for a file, renames the temporary file onto the destination.
    pub fn commit(self) -> io::Result<()> {
        let name = self.name();
        let in_context = |e: io::Error| write_error(&name, e);
        match self.target {
            Target::Stdout(mut writer) => writer.flush().map_err(in_context),
            Target::InPlace { mut writer, .. } => writer.flush().map_err(in_context),
            Target::File {
                writer,
                destination,
                interrupt,
            } => {
                let file = writer
                    .into_inner()
                    .map_err(|e| in_context(e.into_error()))?;
                if self.sync {
                    file.as_file().sync_data().map_err(in_context)?;
                }
                let persisted = file.persist(&destination);
                drop(interrupt);
                persisted.map_err(|e| in_context(e.error))?;
                Ok(())
            }
        }
    }

    /// How the output is named in messages.
    fn name(&self) -> String {
        match &self.target {
            Target::Stdout(_) => "standard output".to_string(),
            Target::File { destination, .. } | Target::InPlace { destination, .. } => {
                destination.display().to_string()
            }
        }
    }

    /// A write error naming this output.
    fn write_error(&self, error: io::Error) -> io::Error {
        write_error(&self.name(), error)
    }
}

/// A write error naming the output `name`, of the same kind as `error`.
fn write_error(name: &str, error: io::Error) -> io::Error {
    io::Error::new(error.kind(), format!("cannot write {name}: {error}"))
}

/// Whether `path` names a file that is already open (`/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`,
/// or any name in `/proc`): renaming a file onto it would replace the name, not write to the file.
fn names_open_file(path: &Path) -> bool {
    path.starts_with("/proc")
        || path.starts_with("/dev/fd")
        || fs::read_link(path).is_ok_and(|target| target.starts_with("/proc"))
}

/// Opens an existing device, named pipe, terminal or open file's name for writing in place, appending
/// (so `-o /dev/stdout >> log` appends, as the shell's redirection asked).
fn open_in_place(path: &Path, binary: bool) -> Result<Target, OutputError> {
    let file = fs::OpenOptions::new()
        .append(true)
        .open(path)
        .map_err(|source| OutputError::Open {
            path: path.to_path_buf(),
            source,
        })?;
    if binary && file.is_terminal() {
        return Err(OutputError::BinaryToTerminal);
    }
    Ok(Target::InPlace {
        writer: BufWriter::with_capacity(WRITE_BUFFER, file),
        destination: path.to_path_buf(),
    })
}

/// Creates the temporary file for `destination` in its folder (after removing those that killed
/// runs left there), with the replaced file's `permissions` if there is one.
fn open_temporary(
    destination: &Path,
    permissions: Option<Permissions>,
) -> Result<Target, OutputError> {
    let dir = match destination.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    remove_stale_temporaries(&dir);
    let mut builder = tempfile::Builder::new();
    let prefix = format!("{TEMP_PREFIX}{}-", std::process::id());
    builder.prefix(&prefix).suffix(TEMP_SUFFIX);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(Permissions::from_mode(NEW_FILE_MODE));
    }
    // The error names the destination, not the temporary file (whose name tempfile adds).
    let create_error = |source: io::Error| OutputError::Create {
        path: destination.to_path_buf(),
        source: io::Error::new(source.kind(), without_path(&source)),
    };
    let file = builder.tempfile_in(&dir).map_err(create_error)?;
    if let Some(permissions) = permissions {
        file.as_file()
            .set_permissions(permissions)
            .map_err(create_error)?;
    }
    // The lock tells a run in another process namespace (or on another host sharing the folder)
    // that this file is in use; where locks are not supported, the process id check still holds.
    let _ = file.as_file().try_lock();
    let interrupt = interrupt::Registration::new(file.path());
    Ok(Target::File {
        writer: BufWriter::with_capacity(WRITE_BUFFER, file),
        destination: destination.to_path_buf(),
        interrupt,
    })
}

/// Where `path` leads through symbolic links that end in a missing file (each relative target
/// taken from its link's folder), or `path` itself when it is not a link. Stops after 40 links, as
/// the kernel does.
fn link_target(path: &Path) -> PathBuf {
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        let Ok(target) = fs::read_link(&current) else {
            break;
        };
        current = match current.parent() {
            Some(folder) => folder.join(target),
            None => target,
        };
    }
    current
}

/// The operating system's message of an error that tempfile ended with ` at path "<temporary>"`.
fn without_path(error: &io::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at path \"") {
        Some(end) => text[..end].to_string(),
        None => text,
    }
}

/// Removes the temporary outputs in `dir` whose writer is gone: named by a process that no longer
/// exists, and not locked. Best effort: anything unexpected leaves the file alone.
fn remove_stale_temporaries(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(temporary_owner) else {
            continue;
        };
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_file && pid != std::process::id() && !process_exists(pid) && !is_locked(&entry.path())
        {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// The process id in a temporary output's name `.cqlwire-<pid>-<random>.tmp`.
fn temporary_owner(name: &str) -> Option<u32> {
    let middle = name.strip_prefix(TEMP_PREFIX)?.strip_suffix(TEMP_SUFFIX)?;
    let (pid, _random) = middle.split_once('-')?;
    pid.parse().ok()
}

/// Whether process `pid` exists; true when that cannot be known (no `/proc`).
fn process_exists(pid: u32) -> bool {
    let proc = Path::new("/proc");
    !proc.join("self").exists() || proc.join(pid.to_string()).exists()
}

/// Whether another open file holds a lock on `path` (its writer is still running).
fn is_locked(path: &Path) -> bool {
    match File::open(path) {
        Ok(file) => matches!(file.try_lock(), Err(fs::TryLockError::WouldBlock)),
        Err(_) => true,
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let result = match &mut self.target {
            Target::Stdout(w) => w.write(buf),
            Target::File { writer, .. } => writer.write(buf),
            Target::InPlace { writer, .. } => writer.write(buf),
        };
        result.map_err(|e| self.write_error(e))
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        let result = match &mut self.target {
            Target::Stdout(w) => w.write_all(buf),
            Target::File { writer, .. } => writer.write_all(buf),
            Target::InPlace { writer, .. } => writer.write_all(buf),
        };
        result.map_err(|e| self.write_error(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        let result = match &mut self.target {
            Target::Stdout(w) => w.flush(),
            Target::File { writer, .. } => writer.flush(),
            Target::InPlace { writer, .. } => writer.flush(),
        };
        result.map_err(|e| self.write_error(e))
    }
}

impl Destination for Output {
    fn can_rewrite(&self) -> bool {
        Output::can_rewrite(self)
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        Output::write_at(self, offset, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_renames_into_place_and_drop_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out.bin");
        let mut out = Output::open(Some(&dest), true).unwrap();
        out.write_all(b"abc").unwrap();
        out.commit().unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"abc");

        let mut out = Output::open(Some(&dest), true).unwrap();
        out.write_all(b"partial").unwrap();
        drop(out);
        assert_eq!(std::fs::read(&dest).unwrap(), b"abc");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn same_destination_sees_one_new_file_spelled_two_ways() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("out");
        fs::create_dir(&sub).unwrap();
        let plain = sub.join("same.npy");
        let dotted = dir.path().join("./out/../out/same.npy");
        assert!(same_destination(Some(&plain), Some(&dotted)));
        assert!(!same_destination(Some(&plain), Some(&sub.join("ids.npy"))));
        // A link that leads nowhere yet is created where it points.
        let link = dir.path().join("link.npy");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&plain, &link).unwrap();
            assert!(same_destination(Some(&link), Some(&plain)));
        }
        // Once the file exists, by inode.
        fs::write(&plain, b"x").unwrap();
        assert!(same_destination(Some(&dotted), Some(&plain)));
        assert!(!same_destination(Some(&plain), None));
        assert!(!same_destination(None, None));
    }

    #[test]
    fn write_at_rewrites_a_file_and_continues_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out.bin");
        let mut out = Output::open(Some(&dest), true).unwrap();
        out.write_all(b"header:?;").unwrap();
        out.write_at(7, b"9").unwrap();
        out.write_all(b"data").unwrap();
        out.commit().unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"header:9;data");
    }

    /// The process's umask, from `/proc/self/status`.
    fn umask() -> u32 {
        let status = fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("Umask:")).unwrap();
        u32::from_str_radix(line["Umask:".len()..].trim(), 8).unwrap()
    }

    #[test]
    fn new_files_get_the_umask_mode_and_replaced_files_keep_theirs() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out.bin");
        Output::open(Some(&dest), true).unwrap().commit().unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dest), NEW_FILE_MODE & !umask());

        fs::set_permissions(&dest, Permissions::from_mode(0o640)).unwrap();
        Output::open(Some(&dest), true).unwrap().commit().unwrap();
        assert_eq!(mode(&dest), 0o640);
    }

    /// The id of a process that has exited (and been reaped).
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn temporaries_of_dead_unlocked_writers_are_removed_by_the_next_open() {
        let dir = tempfile::tempdir().unwrap();
        let name = |pid: u32, tag: &str| format!("{TEMP_PREFIX}{pid}-{tag}{TEMP_SUFFIX}");
        let dead = dead_pid();
        let stale = dir.path().join(name(dead, "stale"));
        let locked = dir.path().join(name(dead, "locked"));
        let alive = dir.path().join(name(1, "alive"));
        let mine = dir.path().join(name(std::process::id(), "mine"));
        let unrelated = dir.path().join(".cqlwire-notapid.tmp");
        for path in [&stale, &locked, &alive, &mine, &unrelated] {
            fs::write(path, b"x").unwrap();
        }
        let lock = File::open(&locked).unwrap();
        lock.lock().unwrap();

        let out = Output::open(Some(&dir.path().join("out.bin")), true).unwrap();
        assert!(!stale.exists());
        for kept in [&locked, &alive, &mine, &unrelated] {
            assert!(kept.exists(), "{} was removed", kept.display());
        }
        // The open output's own temporary file is named after this process and locked.
        let own: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| temporary_owner(n) == Some(std::process::id()) && !n.contains("mine"))
            .collect();
        assert_eq!(own.len(), 1);
        assert!(is_locked(&dir.path().join(&own[0])));
        drop(out);
        drop(lock);
        Output::open(Some(&dir.path().join("out.bin")), true).unwrap();
        assert!(!locked.exists());
    }

    #[test]
    fn temporary_names() {
        assert_eq!(temporary_owner(".cqlwire-123-aZ9xQ1.tmp"), Some(123));
        assert_eq!(temporary_owner(".cqlwire-aZ9xQ1.tmp"), None);
        assert_eq!(temporary_owner(".cqlwire-123-aZ9xQ1.tmp.bak"), None);
        assert_eq!(temporary_owner("cqlwire-123-x.tmp"), None);
    }

    #[test]
    fn the_same_file_is_refused_by_path_link_or_hard_link() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.bin");
        let other = dir.path().join("other.bin");
        let hard = dir.path().join("hard.bin");
        let soft = dir.path().join("soft.bin");
        fs::write(&input, b"data").unwrap();
        fs::write(&other, b"data").unwrap();
        fs::hard_link(&input, &hard).unwrap();
        std::os::unix::fs::symlink(&input, &soft).unwrap();
        for same in [&input, &hard, &soft] {
            let error = refuse_same_file(Some(&input), Some(same)).unwrap_err();
            assert!(matches!(error, OutputError::SameFile { .. }), "{error}");
        }
        refuse_same_file(Some(&input), Some(&other)).unwrap();
        refuse_same_file(Some(&input), Some(&dir.path().join("new.bin"))).unwrap();
        refuse_same_file(Some(&input), Some(Path::new("/dev/null"))).unwrap();
        assert_eq!(fs::read(&input).unwrap(), b"data");
    }

    #[test]
    fn a_directory_is_refused_as_output() {
        let dir = tempfile::tempdir().unwrap();
        let error = Output::open(Some(dir.path()), true).err().unwrap();
        assert!(matches!(error, OutputError::Directory { .. }), "{error}");
    }

    #[test]
    fn names_of_open_files_are_recognised() {
        for open in ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"] {
            assert!(names_open_file(Path::new(open)), "{open}");
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain.bin");
        fs::write(&file, b"x").unwrap();
        for plain in [file.as_path(), Path::new("/dev/shm/out.bin")] {
            assert!(!names_open_file(plain), "{}", plain.display());
        }
    }

    #[test]
    fn through_a_symbolic_link_the_target_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.bin");
        let link = dir.path().join("link.bin");
        fs::write(&target, b"old").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let mut out = Output::open(Some(&link), true).unwrap();
        out.write_all(b"new").unwrap();
        out.commit().unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(&target).unwrap(), b"new");
    }

    #[test]
    fn a_device_is_written_in_place_and_errors_name_the_destination() {
        let mut out = Output::open(Some(Path::new("/dev/null")), true).unwrap();
        out.write_all(b"discarded").unwrap();
        out.commit().unwrap();
        assert!(!fs::metadata("/dev/null").unwrap().is_file());

        let mut full = Output::open(Some(Path::new("/dev/full")), true).unwrap();
        full.write_all(&[0; 2 * WRITE_BUFFER]).unwrap_err();
        let mut full = Output::open(Some(Path::new("/dev/full")), true).unwrap();
        full.write_all(b"small").unwrap();
        let error = full.commit().unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::StorageFull);
        assert!(
            error.to_string().starts_with("cannot write /dev/full: "),
            "{error}"
        );
    }
}
