//! What the operating system answers, behind one seam (issue 24): the machine's identity (and,
//! as they move here, the process scan and file cloning). Nothing outside it reads `/etc` or
//! calls an OS-specific API, so what the Linux tests run is what macOS runs.

pub mod machine;
