# Code that runs inside the programs under test (the bundled workloads, the
# preload library) is built without the sanitizers of a sanitizer build:
# they would interpose malloc and pthread_mutex_lock themselves and change
# what is recorded. Called from such a directory's CMakeLists.txt.
macro(incise_without_sanitizers)
  get_directory_property(_incise_compile_options COMPILE_OPTIONS)
  list(FILTER _incise_compile_options EXCLUDE REGEX "sanitize")
  set_directory_properties(PROPERTIES COMPILE_OPTIONS "${_incise_compile_options}")
  get_directory_property(_incise_link_options LINK_OPTIONS)
  list(FILTER _incise_link_options EXCLUDE REGEX "sanitize")
  set_directory_properties(PROPERTIES LINK_OPTIONS "${_incise_link_options}")
endmacro()
