/* SPDX-License-Identifier: MIT */
/*
 * Symbol-name demangling for mt-symbolize: C++ and Rust (legacy and v0)
 * through libiberty's cplus_demangle, as binutils does, and OCaml names
 * ("camlModule__name_12", "$xx" hex escapes) by hand.
 */
#ifndef MT_SYM_DEMANGLE_H
#define MT_SYM_DEMANGLE_H

/*
 * Demangles @raw (OCaml names too when @ocaml is set; binutils does not
 * know them).  A "@plt" or "@VERSION" suffix is kept and re-appended, as
 * binutils' bfd_demangle does.  Returns a malloc'd string the caller
 * frees, or NULL when @raw is not a mangled name (or memory ran out): the
 * caller then uses @raw as it is.
 */
char *sym_demangle(const char *raw, int ocaml);

/* OCaml only: "camlStdlib__List__map_123" -> "Stdlib.List.map_123". */
char *sym_demangle_ocaml(const char *raw);

#endif /* MT_SYM_DEMANGLE_H */
