"""How hosts exist: network namespaces (process backend); containers and kind later."""
