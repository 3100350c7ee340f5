// The commit the running program was built from ("abc123def456", "-dirty" appended when the
// tree had uncommitted changes, "unknown" outside a git checkout). Defined in a file that
// cmake/ApiaryCommitStamp.cmake regenerates on every build; link apiary_commit_stamp.
#pragma once

namespace apiary {
const char* source_commit();
}  // namespace apiary
