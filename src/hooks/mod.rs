//! Hook files: the shims in `hooks/`, installing them beside (and chained to) hooks that other
//! tools wrote, and uninstalling them so exactly what was there comes back.
