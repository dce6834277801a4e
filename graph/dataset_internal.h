/* dataset_internal.h: what the dataset reader and writer share. */
#ifndef BURROW_DATASET_INTERNAL_H
#define BURROW_DATASET_INTERNAL_H

#include "npy.h"

/* "train", "valid", "test", indexed by enum burrow_split. */
extern const char *const bw_split_names[3];

/* Sane caps on meta.json's counts that size allocations before any file is read
 * (OGB's largest has 172 classes and 602 features). */
#define BW_MAX_CLASSES (1 << 20)
#define BW_MAX_FEAT_DIM (1 << 20)

/* Stream the graph into a dataset writer when it is too large to hold: indptr whole
 * ([num_nodes + 1], borrowed, written at once), then the ids row by row in any number
 * of pieces (int32 when num_nodes < 2^31, else int64), then end, which checks that
 * exactly indptr[num_nodes] ids arrived. Takes the place of burrow_writer_put_graph. */
int bw_writer_graph_begin(burrow_writer *w, const int64_t *indptr, int64_t num_nodes, bool symmetric);
int bw_writer_graph_append(burrow_writer *w, const void *ids, int64_t n);
int bw_writer_graph_end(burrow_writer *w);
/* Stream edge_features.npy [num_edges, dim] (F32 or F16) in CSR order, once the graph's entry
 * count is known (after bw_writer_graph_begin or a whole graph): begin, append rows in entry
 * order, end, which checks that exactly num_edges rows arrived. Takes the place of
 * burrow_writer_put_edge_features (for a writer whose graph has no input edge ids). */
int bw_writer_edge_features_begin(burrow_writer *w, int64_t dim, burrow_dtype dtype);
int bw_writer_edge_features_append(burrow_writer *w, const void *rows, int64_t n);
int bw_writer_edge_features_end(burrow_writer *w);
struct cJSON;
/* Parts of a dataset beyond the base layout (edge splits): bw_writer_file sets *path to rel
 * inside the writer's temporary directory (bw_free it), its folder made, for the caller to write;
 * bw_writer_meta_add puts item (taken, freed on failure too) into meta.json under key;
 * bw_writer_dir is the final directory (for messages); bw_writer_rebase makes a message about
 * a file inside the temporary directory name the final one. All before commit. */
int bw_writer_file(burrow_writer *w, const char *rel, char **path);
int bw_writer_meta_add(burrow_writer *w, const char *key, struct cJSON *item);
const char *bw_writer_dir(const burrow_writer *w);
int bw_writer_rebase(const burrow_writer *w, int status);
/* Type t's features read in place (docs/format.md): meta.json names the .npy at path (an
 * absolute path) instead of features/<type>.npy;
 * its header gives feat_dim, dtype (float32 or float16) and data offset, and its rows must
 * be the type's count. Nothing is copied. Instead of burrow_writer_type_features_begin. */
int bw_writer_type_features_ref(burrow_writer *w, int t, const char *path);
/* The same for a file without an .npy header (IGB large's and full's node_feat.npy): raw
 * [num_nodes, dim] rows of dtype from byte 0, the file exactly that long (else refused in one
 * line naming the file, its size and the size expected); meta.json says "header": false. */
int bw_writer_type_features_raw(burrow_writer *w, int t, const char *path, int64_t dim, burrow_dtype dtype);
/* CSR entries written so far (after put_graph or put_builder). */
int64_t bw_writer_num_edges(const burrow_writer *w);

/* The graph's mapped pages (indptr.npy, indices.npy) resident in this process: training
 * and sampled evaluation touch every page of them over an epoch, and each page touched
 * stays counted in the process's RSS until unmapped. bw_dataset_trim_graph unmaps them
 * all (madvise(MADV_DONTNEED): the pages stay in the page cache, so the next touch is a
 * minor fault, not a read) once the process's resident file-backed bytes (the third field
 * of /proc/self/statm) pass keep_bytes; 1 when it trimmed, 0 when not (also where statm
 * cannot be read). bw_dataset_graph_keep_bytes is the bound to use: BURROW_GRAPH_RESIDENT
 * (bytes, K/M/G suffixes, "off" for no bound) if set, else a sixteenth of physical memory.
 * Between two trims the pages grow by what the batch sampled in between touches, times the
 * kernel's fault-around (each fault also maps up to 16 neighboring pages that are in the
 * page cache; MADV_RANDOM does not stop that on 6.18, measured): bounded by the graph's
 * cached pages, not by the batch. bw_dataset_graph_random advises MADV_RANDOM, so that a
 * miss reads the page, not 128 KiB of readahead, for rows read at random. */
int bw_dataset_trim_graph(const burrow_dataset *ds, int64_t keep_bytes);
void bw_dataset_graph_random(const burrow_dataset *ds);
int64_t bw_dataset_graph_keep_bytes(void);
/* The directory the dataset was opened from, as given (borrowed), for messages. */
const char *bw_dataset_dir(const burrow_dataset *ds);
/* Resident file-backed bytes of this process (statm), or -1. */
int64_t bw_resident_file_bytes(void);

/* May `path` be replaced by an output (--force)? 0 when it is absent or a directory
 * holding a Burrow dataset's or parts directory's meta.json, else BURROW_E_EXISTS with a
 * refusal naming it. Also BURROW_E_INVAL when it is, or holds, `input` (NULL: none): an
 * output never replaces an input of the same command. */
int bw_check_replaceable(const char *path, const char *input);

/* A directory's meta.json (graph/writer.c): an object opened with its "format" and
 * "version" by bw_meta_begin (NULL when memory runs out), then written whole by
 * bw_meta_write to dir/meta.json, atomically, after "created_by" and "burrow_version";
 * it frees the object. built: false when a part could not be made. Running out of memory
 * anywhere (meta NULL too) is BURROW_E_NOMEM, "DIR: out of memory writing meta.json". */
struct cJSON *bw_meta_begin(const char *format, int version);
int bw_meta_write(struct cJSON *meta, const char *dir, bool built);

/* Format version 2 (typed graphs, docs/format.md); version 1 is BURROW_DATASET_FORMAT_VERSION. */
#define BW_DATASET_VERSION_TYPED BURROW_DATASET_FORMAT_TYPED

/* What dataset.c shares with the typed reader: a non-negative integer of a JSON object
 * ("path: \"key\" must be ..." otherwise), an array's dtype and shape checked against
 * meta.json's, and dir/rel mapped and checked. */
int bw_json_count(const struct cJSON *obj, const char *key, int64_t *v, const char *path);
int bw_expect_array(const char *path, const bw_npy *h, burrow_dtype t, int ndim, const int64_t *shape);
int bw_map_array(const char *dir, const char *rel, bw_npy_map *m, burrow_dtype t, int ndim, const int64_t *shape);

/* A version-2 dataset's typed graph (hetero.c). bw_typed_open reads meta.json's object
 * (parsed, borrowed; path for messages) against the files of dir, maps and validates them,
 * and fills *info as burrow_dataset_get_info describes a typed dataset. */
typedef struct bw_typed bw_typed;
int bw_typed_open(bw_typed **out, const char *dir, const char *meta_path, const struct cJSON *meta,
		  burrow_dataset_info *info);
void bw_typed_close(bw_typed *t);
const burrow_hetero *bw_typed_hetero(const bw_typed *t);
int bw_typed_type_info(const bw_typed *t, int type, burrow_type_info *out);
/* Whether type's features file has no .npy header (meta.json "features"."header": false). */
bool bw_typed_type_raw(const bw_typed *t, int type);
bool bw_dataset_type_raw(const burrow_dataset *ds, int type);
/* The target type's info; false when there is none. */
bool bw_typed_target_info(const bw_typed *t, burrow_type_info *out);
const int32_t *bw_typed_labels(const bw_typed *t);
const int64_t *bw_typed_split(const bw_typed *t, int split);
int bw_typed_verify(const bw_typed *t);
int64_t bw_typed_disk_bytes(const bw_typed *t);

/* Is s a valid type or relation name: 1 .. BURROW_MAX_NAME - 1 of [A-Za-z0-9_-]? */
bool bw_type_name_ok(const char *s);
/* A relation's folder under relations/: "<src>___<name>___<dst>" into buf[cap]. */
void bw_relation_dir(char *buf, size_t cap, const char *src, const char *name, const char *dst);

/* A link dataset's edge splits (edgesplit.c): bw_esplit_open reads meta.json's
 * "edge_split" object (parsed, borrowed; meta_path for messages), maps the edge_split/ npy files of
 * dir (borrowed: it must outlive the handle) and checks them for N nodes. */
typedef struct bw_esplit bw_esplit;
int bw_esplit_open(bw_esplit **out, const char *dir, const char *meta_path, const struct cJSON *o, int64_t num_nodes);
void bw_esplit_close(bw_esplit *e);
int bw_esplit_verify(const bw_esplit *e);
void bw_esplit_get(const bw_esplit *e, int split, burrow_edge_split *out);

#endif
