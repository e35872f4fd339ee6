#pragma once
// kernel.perf_event_paranoid decides what an unprivileged process may count:
//   -1 everything, 0 per-CPU (system-wide) counting, 1 per-thread user and kernel code,
//   2 per-thread user code only, 3 (Debian and derivatives) nothing.
// CAP_PERFMON or CAP_SYS_ADMIN bypass it. These checks run before any counter is opened so the
// error can say which sysctl value the requested mode needs.
#include "prof/counting_options.hpp"

namespace telar::prof {

// The current setting; throws telar::Error if the kernel has no perf events at all.
int read_paranoid(const PermissionProbe& probe);

bool has_perf_privilege(const PermissionProbe& probe);

// The highest perf_event_paranoid value that allows `mode` in `domain` (Auto counts as All).
int paranoid_needed(CountingMode mode, Domain domain);

// Auto becomes All where allowed, User otherwise; other domains stay as they are.
Domain effective_domain(CountingMode mode, Domain requested, const PermissionProbe& probe);

// Throws a one-line telar::Error saying which sysctl value is needed if the setting forbids it.
void check_permission(CountingMode mode, Domain domain, const PermissionProbe& probe);

// The advice in that error, also used when perf_event_open itself answers EACCES.
std::string permission_advice(CountingMode mode, Domain domain, int paranoid);

}  // namespace telar::prof
