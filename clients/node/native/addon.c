// The module Node loads: three functions over the Go side's sessions
// (addon.go).
//
//   open(argsJSON)    -> session id (a number); argsJSON is the sidecar
//                        command's arguments as a JSON array of strings
//   handle(id, frame) -> the response frame (a Buffer)
//   close(id)
//   sessions()        -> how many sessions are open, in every thread
//
// Each module instance (the main thread's, a worker's) owns the sessions
// it opened: when Node tears the instance down (the worker exits) the
// cleanup hook closes them.
//
// open throws an Error whose code is MUSTARD_ARGUMENTS for arguments it
// refuses; handle throws one whose code is MUSTARD_SESSION_ENDED when
// the session is closed or the request ended it (a fatal request).

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include "napi.h"
#include "_cgo_export.h"

napi_status (*mustard_napi_create_function)(napi_env, const char*, size_t, napi_callback, void*, napi_value*);
napi_status (*mustard_napi_set_named_property)(napi_env, napi_value, const char*, napi_value);
napi_status (*mustard_napi_get_cb_info)(napi_env, napi_callback_info, size_t*, napi_value*, napi_value*, void**);
napi_status (*mustard_napi_get_typedarray_info)(napi_env, napi_value, int*, size_t*, void**, napi_value*, size_t*);
napi_status (*mustard_napi_is_typedarray)(napi_env, napi_value, _Bool*);
napi_status (*mustard_napi_get_value_double)(napi_env, napi_value, double*);
napi_status (*mustard_napi_get_value_string_utf8)(napi_env, napi_value, char*, size_t, size_t*);
napi_status (*mustard_napi_create_double)(napi_env, double, napi_value*);
napi_status (*mustard_napi_create_buffer)(napi_env, size_t, void**, napi_value*);
napi_status (*mustard_napi_throw_error)(napi_env, const char*, const char*);
napi_status (*mustard_napi_get_undefined)(napi_env, napi_value*);
napi_status (*mustard_napi_add_env_cleanup_hook)(napi_env, void (*)(void*), void*);

#define LOAD(name)                                                \
	do {                                                          \
		*(void**)(&mustard_##name) = dlsym(RTLD_DEFAULT, #name);  \
		if (mustard_##name == NULL) return 0;                     \
	} while (0)

// mustard_napi_load finds the functions in the running node binary; 0
// if one is missing (not loaded by node).
static int mustard_napi_load(void) {
	LOAD(napi_create_function);
	LOAD(napi_set_named_property);
	LOAD(napi_get_cb_info);
	LOAD(napi_get_typedarray_info);
	LOAD(napi_is_typedarray);
	LOAD(napi_get_value_double);
	LOAD(napi_get_value_string_utf8);
	LOAD(napi_create_double);
	LOAD(napi_create_buffer);
	LOAD(napi_throw_error);
	LOAD(napi_get_undefined);
	LOAD(napi_add_env_cleanup_hook);
	return 1;
}

static napi_value undefined(napi_env env) {
	napi_value u = NULL;
	mustard_napi_get_undefined(env, &u);
	return u;
}

// fail throws msg (Go's, freed here) with code.
static napi_value fail(napi_env env, const char* code, char* msg) {
	mustard_napi_throw_error(env, code, msg);
	free(msg);
	return NULL;
}

// session_arg reads argument 0 as a session id.
static int session_arg(napi_env env, size_t argc, napi_value* argv, uint64_t* id) {
	double d;
	if (argc < 1 || mustard_napi_get_value_double(env, argv[0], &d) != 0 || !(d >= 1 && d < 9007199254740992.0) || d != (double)(uint64_t)d) {
		mustard_napi_throw_error(env, "ERR_INVALID_ARG_TYPE", "the session id must be a number");
		return 0;
	}
	*id = (uint64_t)d;
	return 1;
}

static napi_value js_open(napi_env env, napi_callback_info info) {
	size_t argc = 1;
	napi_value argv[1];
	size_t n = 0;
	void* owner = NULL;
	if (mustard_napi_get_cb_info(env, info, &argc, argv, NULL, &owner) != 0) return NULL;
	if (argc < 1 || mustard_napi_get_value_string_utf8(env, argv[0], NULL, 0, &n) != 0) {
		mustard_napi_throw_error(env, "ERR_INVALID_ARG_TYPE", "the arguments must be a JSON string");
		return NULL;
	}
	char* args = malloc(n + 1);
	if (args == NULL) {
		mustard_napi_throw_error(env, "ERR_MEMORY_ALLOCATION_FAILED", "out of memory");
		return NULL;
	}
	mustard_napi_get_value_string_utf8(env, argv[0], args, n + 1, &n);
	uint64_t id = 0;
	char* err = mustardOpen((uint64_t)(uintptr_t)owner, args, n, &id);
	free(args);
	if (err != NULL) return fail(env, "MUSTARD_ARGUMENTS", err);
	napi_value out = NULL;
	mustard_napi_create_double(env, (double)id, &out);
	return out;
}

static napi_value js_close(napi_env env, napi_callback_info info) {
	size_t argc = 1;
	napi_value argv[1];
	uint64_t id;
	if (mustard_napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != 0) return NULL;
	if (!session_arg(env, argc, argv, &id)) return NULL;
	mustardClose(id);
	return undefined(env);
}

static napi_value js_handle(napi_env env, napi_callback_info info) {
	size_t argc = 2;
	napi_value argv[2];
	uint64_t id;
	_Bool typed = 0;
	int type = 0;
	size_t length = 0;
	void* data = NULL;
	if (mustard_napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != 0) return NULL;
	if (!session_arg(env, argc, argv, &id)) return NULL;
	if (argc < 2 || mustard_napi_is_typedarray(env, argv[1], &typed) != 0 || !typed ||
	    mustard_napi_get_typedarray_info(env, argv[1], &type, &length, &data, NULL, NULL) != 0 ||
	    type != 1 /* napi_uint8_array */) {
		mustard_napi_throw_error(env, "ERR_INVALID_ARG_TYPE", "the request frame must be a Uint8Array");
		return NULL;
	}
	size_t n = 0;
	char* err = mustardHandle(id, data, length, &n);
	if (err != NULL) return fail(env, "MUSTARD_SESSION_ENDED", err);
	void* dst = NULL;
	napi_value out = NULL;
	if (mustard_napi_create_buffer(env, n, &dst, &out) != 0) {
		mustardDrop(id);
		mustard_napi_throw_error(env, "ERR_MEMORY_ALLOCATION_FAILED", "the response could not be allocated");
		return NULL;
	}
	mustardTake(id, dst, n);
	return out;
}

static napi_value js_sessions(napi_env env, napi_callback_info info) {
	napi_value out = NULL;
	mustard_napi_create_double(env, (double)mustardSessions(), &out);
	return out;
}

static int define(napi_env env, napi_value exports, const char* name, napi_callback cb, void* data) {
	napi_value fn;
	if (mustard_napi_create_function(env, name, strlen(name), cb, data, &fn) != 0) return 0;
	return mustard_napi_set_named_property(env, exports, name, fn) == 0;
}

// cleanup closes what one module instance opened.
static void cleanup(void* owner) { mustardCloseOwner((uint64_t)(uintptr_t)owner); }

// Node-API's entry point: Node looks it up when it loads the file.
__attribute__((visibility("default"))) napi_value napi_register_module_v1(napi_env env, napi_value exports) {
	if (!mustard_napi_load()) return NULL;
	void* owner = (void*)(uintptr_t)mustardNewOwner();
	if (mustard_napi_add_env_cleanup_hook(env, cleanup, owner) != 0 || !define(env, exports, "open", js_open, owner) ||
	    !define(env, exports, "handle", js_handle, NULL) || !define(env, exports, "close", js_close, NULL) ||
	    !define(env, exports, "sessions", js_sessions, NULL)) {
		return NULL;
	}
	return exports;
}
