/* SPDX-License-Identifier: MIT */
/*
 * The version of the mt suite: what every program's -V prints and what
 * mt-capture records as the snapshot's `mt-version` META key.  The one
 * place to change it.
 */
#ifndef MT_VERSION_H
#define MT_VERSION_H

#define MT_VERSION "0.1"

#endif /* MT_VERSION_H */
