"""A managed local llama.cpp server (the prebuilt `xllamacpp` wheel, the `local` extra): models from PyPI
packages or any GGUF, a tool-capable chat template per supported family, one thread, output caps.
See README.md beside this file."""

from utils.local_model.gguf import GGUFError, GGUFInfo, read_gguf
from utils.local_model.packages import DEFAULT_PACKAGE, PACKAGES, ModelPackage, ModelUnavailable, package
from utils.local_model.process import RunningModel, local_model_server
from utils.local_model.server import LocalModelError, ServeConfig, choose_template, gecko_alias, start

__all__ = ["DEFAULT_PACKAGE", "GGUFError", "GGUFInfo", "LocalModelError", "ModelPackage", "ModelUnavailable",
           "PACKAGES", "RunningModel", "ServeConfig", "choose_template", "gecko_alias", "local_model_server",
           "package", "read_gguf", "start"]
