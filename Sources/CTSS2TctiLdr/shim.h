// The TCTI loader: turns a configuration string ("device:/dev/tpmrm0", "swtpm:path=...") into a
// TCTI context (it dlopens libtss2-tcti-<driver>.so.0 at run time).
#include <tss2/tss2_tctildr.h>
