// Anchor of the precompiled header the test executables share (tests/CMakeLists.txt).
