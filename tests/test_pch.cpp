// test_pch.cpp — the object library that carries the tests' precompiled header (tests/CMakeLists.txt); nothing else.
