cmake_minimum_required(VERSION 3.25)
# The per-trajectory core (include/saltation/core/) is compiled for the device, and later by
# NVRTC, which has no host runtime: every header it reaches must include nothing host-only and use
# no exceptions, host I/O or allocation. Run as
#   cmake -DCXX=<compiler> -DINCLUDE_DIR=<include/> -P core_device_safe.cmake
# It lists each core header's dependencies with the compiler (-M) and fails naming the header
# and what it reached.
set(forbidden_headers string vector stdexcept exception cstdio stdio.h iostream ostream sstream
                      map unordered_map memory functional errors.hpp)
set(forbidden_tokens "throw " "snprintf" "printf(" "std::string" "std::vector" "malloc(" "new ")
file(GLOB core_headers "${INCLUDE_DIR}/saltation/core/*.hpp")
set(failures "")
foreach(header IN LISTS core_headers)
  execute_process(COMMAND ${CXX} -std=c++17 -x c++ -M -I${INCLUDE_DIR} ${header}
                  OUTPUT_VARIABLE deps RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(APPEND failures "${header}: does not compile on its own:\n${err}\n")
    continue()
  endif()
  string(REGEX REPLACE "[ \\\\\n]+" ";" deps "${deps}")
  foreach(dep IN LISTS deps)
    get_filename_component(name "${dep}" NAME)
    if(name IN_LIST forbidden_headers)
      string(APPEND failures "${header}: reaches host-only <${name}> (${dep})\n")
    endif()
    if(dep MATCHES "/include/saltation/.*\\.hpp$")
      file(READ "${dep}" text)
      string(REGEX REPLACE "//[^\n]*" "" code "${text}")  # comments may name anything
      # Placement new builds an object in storage it is given and allocates nothing.
      string(REPLACE "::new (static_cast<void*>(" "" code "${code}")
      foreach(token IN LISTS forbidden_tokens)
        string(FIND "${code}" "${token}" at)
        if(NOT at EQUAL -1)
          string(APPEND failures "${header}: reaches ${dep}, which uses '${token}'\n")
        endif()
      endforeach()
    endif()
  endforeach()
endforeach()
if(failures)
  list(REMOVE_DUPLICATES failures)
  message(FATAL_ERROR "host-only code in the device core:\n${failures}")
endif()
list(LENGTH core_headers count)
message(STATUS "${count} core headers reach nothing host-only")
