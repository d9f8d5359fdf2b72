#ifndef DEFAULTSD_CSYSTEMD_SHIM_H
#define DEFAULTSD_CSYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
#endif
