// The part of Node-API (https://nodejs.org/api/n-api.html) the addon
// uses, declared here rather than taken from Node's headers: the ABI is
// stable across Node releases, and the functions are looked up in the
// running node binary (dlsym), so the library builds with a C compiler
// alone and links as any Go program does.

#include <stddef.h>
#include <stdint.h>

typedef struct napi_env__* napi_env;
typedef struct napi_value__* napi_value;
typedef struct napi_callback_info__* napi_callback_info;
typedef int napi_status; // napi_ok is 0
typedef napi_value (*napi_callback)(napi_env env, napi_callback_info info);

// The functions, found when the module registers; mustard_napi_load
// returns 0 if node lacks one.
extern napi_status (*mustard_napi_create_function)(napi_env, const char*, size_t, napi_callback, void*, napi_value*);
extern napi_status (*mustard_napi_set_named_property)(napi_env, napi_value, const char*, napi_value);
extern napi_status (*mustard_napi_get_cb_info)(napi_env, napi_callback_info, size_t*, napi_value*, napi_value*, void**);
extern napi_status (*mustard_napi_get_typedarray_info)(napi_env, napi_value, int*, size_t*, void**, napi_value*, size_t*);
extern napi_status (*mustard_napi_is_typedarray)(napi_env, napi_value, _Bool*);
extern napi_status (*mustard_napi_get_value_double)(napi_env, napi_value, double*);
extern napi_status (*mustard_napi_get_value_string_utf8)(napi_env, napi_value, char*, size_t, size_t*);
extern napi_status (*mustard_napi_create_double)(napi_env, double, napi_value*);
extern napi_status (*mustard_napi_create_buffer)(napi_env, size_t, void**, napi_value*);
extern napi_status (*mustard_napi_throw_error)(napi_env, const char*, const char*);
extern napi_status (*mustard_napi_get_undefined)(napi_env, napi_value*);
extern napi_status (*mustard_napi_add_env_cleanup_hook)(napi_env, void (*)(void*), void*);
