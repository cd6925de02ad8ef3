// libpq (Debian libpq-dev), for the fleet store only.
#include <libpq-fe.h>
