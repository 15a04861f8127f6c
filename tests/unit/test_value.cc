// Tests for shared/value: load/unload/xfer/destruct/compare/get_number.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "sample_values.h"
#include "type_traits.h"
#include "value.h"

namespace pmixcpp {
namespace {

using pmixcpp::testing::encodable_value_types;
using pmixcpp::testing::make_sample;

TEST(Value, XferIsDeepForEveryType) {
    for (pmix_data_type_t type : encodable_value_types()) {
        SCOPED_TRACE("type " + std::to_string(type));
        Value src;
        ASSERT_TRUE(make_sample(type, src.get()).ok());
        Value dst;
        ASSERT_TRUE(value_xfer(dst.get(), src.get()).ok());
        EXPECT_EQ(dst->type, type);
        EXPECT_EQ(value_compare(src.get(), dst.get()), PMIX_EQUAL);
        if (data_type_is_pointer_in_value(type)) {
            EXPECT_NE(dst->data.ptr, src->data.ptr);
        }
        if (type == PMIX_STRING) {
            EXPECT_NE(dst->data.string, src->data.string);
        }
        // Destroying the source leaves the copy intact (ASan would flag a shared allocation).
        value_destruct(src.get());
        EXPECT_EQ(src->type, PMIX_UNDEF);
        Value again;
        ASSERT_TRUE(make_sample(type, again.get()).ok());
        EXPECT_EQ(value_compare(again.get(), dst.get()), PMIX_EQUAL);
    }
}

TEST(Value, LoadCopiesTheCallersData) {
    char name[] = "abc";
    Value v;
    ASSERT_TRUE(value_load(v.get(), name, PMIX_STRING).ok());
    name[0] = 'X';
    EXPECT_STREQ(v->data.string, "abc");

    uint32_t nums[] = {1, 2};
    pmix_data_array_t a = {PMIX_UINT32, 2, nums};
    Value d;
    ASSERT_TRUE(value_load(d.get(), &a, PMIX_DATA_ARRAY).ok());
    nums[0] = 99;
    EXPECT_EQ(static_cast<uint32_t *>(d->data.darray->array)[0], 1u);

    Value flag;
    ASSERT_TRUE(value_load(flag.get(), nullptr, PMIX_BOOL).ok());
    EXPECT_TRUE(flag->data.flag);  // a bare flag means true

    Value ns;
    ASSERT_TRUE(value_load(ns.get(), "short", PMIX_PROC_NSPACE).ok());  // bounded read of a short string
    EXPECT_STREQ(*ns->data.nspace, "short");

    int x;
    Value p;
    ASSERT_TRUE(value_load(p.get(), &x, PMIX_POINTER).ok());
    EXPECT_EQ(p->data.ptr, &x);  // pointers are stored, not copied, and not freed by destruct
}

TEST(Value, LoadRejectsUnsupported) {
    Value v;
    int dummy = 0;
    const pmix_data_type_t types[] = {PMIX_TOPO,       PMIX_PROC_CPUSET, PMIX_DATA_BUFFER,
                                      PMIX_PROC_STATS, PMIX_INFO,        4000};
    for (pmix_data_type_t type : types) {
        Status st = value_load(v.get(), &dummy, type);
        EXPECT_EQ(st.code(), PMIX_ERR_NOT_SUPPORTED) << type;
        EXPECT_EQ(v->type, PMIX_UNDEF);
    }
}

TEST(Value, UnloadScalarsIntoCallerStorage) {
    Value v;
    uint16_t in = 0xBEEF;
    ASSERT_TRUE(value_load(v.get(), &in, PMIX_UINT16).ok());
    uint16_t out = 0;
    void *p = &out;
    size_t sz = 0;
    ASSERT_TRUE(value_unload(v.get(), &p, &sz).ok());
    EXPECT_EQ(p, &out);
    EXPECT_EQ(out, 0xBEEF);
    EXPECT_EQ(sz, sizeof(uint16_t));

    void *none = nullptr;
    EXPECT_EQ(value_unload(v.get(), &none, &sz).code(), PMIX_ERR_BAD_PARAM);

    Value proc;
    ASSERT_TRUE(make_sample(PMIX_PROC, proc.get()).ok());
    pmix_proc_t pr;
    void *pp = &pr;
    ASSERT_TRUE(value_unload(proc.get(), &pp, &sz).ok());
    EXPECT_STREQ(pr.nspace, "slurm.pmix.1.0");
    EXPECT_EQ(pr.rank, 3u);
}

TEST(Value, UnloadAllocatesForStringsAndStructures) {
    Value s;
    ASSERT_TRUE(value_load(s.get(), "text", PMIX_STRING).ok());
    void *p = nullptr;
    size_t sz = 0;
    ASSERT_TRUE(value_unload(s.get(), &p, &sz).ok());
    EXPECT_STREQ(static_cast<char *>(p), "text");
    EXPECT_NE(p, s->data.string);
    EXPECT_EQ(sz, 4u);
    free(p);

    Value bo;
    ASSERT_TRUE(make_sample(PMIX_BYTE_OBJECT, bo.get()).ok());
    p = nullptr;
    ASSERT_TRUE(value_unload(bo.get(), &p, &sz).ok());
    EXPECT_EQ(sz, bo->data.bo.size);
    EXPECT_NE(p, bo->data.bo.bytes);
    EXPECT_EQ(memcmp(p, bo->data.bo.bytes, sz), 0);
    free(p);

    Value da;
    ASSERT_TRUE(make_sample(PMIX_DATA_ARRAY, da.get()).ok());
    p = nullptr;
    ASSERT_TRUE(value_unload(da.get(), &p, &sz).ok());
    auto copy = static_cast<pmix_data_array_t *>(p);
    EXPECT_EQ(sz, sizeof(pmix_data_array_t));
    EXPECT_EQ(copy->type, PMIX_INFO);
    EXPECT_EQ(copy->size, 2u);
    data_array_free(copy);

    Value env;
    ASSERT_TRUE(make_sample(PMIX_ENVAR, env.get()).ok());
    p = nullptr;
    ASSERT_TRUE(value_unload(env.get(), &p, &sz).ok());
    auto e = static_cast<pmix_envar_t *>(p);
    EXPECT_STREQ(e->envar, "PATH");
    EXPECT_EQ(e->separator, ':');
    element_destruct(PMIX_ENVAR, e);
    free(e);
}

TEST(Value, Compare) {
    auto u32 = [](uint32_t x) {
        pmix_value_t v;
        memset(&v, 0, sizeof(v));
        v.type = PMIX_UINT32;
        v.data.uint32 = x;
        return v;
    };
    pmix_value_t a = u32(1), b = u32(2), c = u32(1);
    EXPECT_EQ(value_compare(&a, &b), PMIX_VALUE2_GREATER);
    EXPECT_EQ(value_compare(&b, &a), PMIX_VALUE1_GREATER);
    EXPECT_EQ(value_compare(&a, &c), PMIX_EQUAL);
    pmix_value_t i;
    memset(&i, 0, sizeof(i));
    i.type = PMIX_INT32;
    EXPECT_EQ(value_compare(&a, &i), PMIX_VALUE_TYPE_DIFFERENT);

    pmix_value_t n1, n2;
    memset(&n1, 0, sizeof(n1));
    memset(&n2, 0, sizeof(n2));
    n1.type = n2.type = PMIX_INT8;
    n1.data.int8 = -5;
    n2.data.int8 = 3;
    EXPECT_EQ(value_compare(&n1, &n2), PMIX_VALUE2_GREATER);  // signed comparison

    Value s1, s2, snull;
    ASSERT_TRUE(value_load(s1.get(), "abc", PMIX_STRING).ok());
    ASSERT_TRUE(value_load(s2.get(), "abd", PMIX_STRING).ok());
    snull->type = PMIX_STRING;
    EXPECT_EQ(value_compare(s1.get(), s2.get()), PMIX_VALUE2_GREATER);
    EXPECT_EQ(value_compare(s1.get(), snull.get()), PMIX_VALUE1_GREATER);

    pmix_value_t d1, d2;
    memset(&d1, 0, sizeof(d1));
    memset(&d2, 0, sizeof(d2));
    d1.type = d2.type = PMIX_DOUBLE;
    d1.data.dval = NAN;
    d2.data.dval = 1.0;
    EXPECT_EQ(value_compare(&d1, &d2), PMIX_VALUE_COMPARISON_NOT_AVAIL);

    uint32_t c1v[1] = {1}, c2v[1] = {1};
    pmix_coord_t c1 = {PMIX_COORD_LOGICAL_VIEW, c1v, 1}, c2 = {PMIX_COORD_PHYSICAL_VIEW, c2v, 1};
    Value vc1, vc2;
    ASSERT_TRUE(value_load(vc1.get(), &c1, PMIX_COORD).ok());
    ASSERT_TRUE(value_load(vc2.get(), &c2, PMIX_COORD).ok());
    EXPECT_EQ(value_compare(vc1.get(), vc2.get()), PMIX_VALUE_INCOMPATIBLE_OBJECTS);
}

TEST(Value, GetNumberConvertsWithRangeChecks) {
    pmix_value_t v;
    memset(&v, 0, sizeof(v));
    v.type = PMIX_UINT32;
    v.data.uint32 = 300;
    int64_t i64 = 0;
    ASSERT_TRUE(value_get_number(&v, &i64, PMIX_INT64).ok());
    EXPECT_EQ(i64, 300);
    uint8_t u8 = 7;
    EXPECT_EQ(value_get_number(&v, &u8, PMIX_UINT8).code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(u8, 7);  // untouched on failure
    uint16_t u16 = 0;
    ASSERT_TRUE(value_get_number(&v, &u16, PMIX_UINT16).ok());
    EXPECT_EQ(u16, 300);

    v.type = PMIX_INT;
    v.data.integer = -1;
    size_t sz = 5;
    EXPECT_FALSE(value_get_number(&v, &sz, PMIX_SIZE).ok());
    EXPECT_EQ(sz, 5u);
    auto r = value_to_number<int16_t>(v);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value(), -1);

    v.type = PMIX_UINT64;
    v.data.uint64 = UINT64_MAX;
    EXPECT_FALSE(value_to_number<int64_t>(v).ok());
    EXPECT_TRUE(value_to_number<uint64_t>(v).ok());

    v.type = PMIX_DOUBLE;
    v.data.dval = 42.0;
    EXPECT_EQ(value_to_number<int>(v).value(), 42);
    v.data.dval = 42.5;
    EXPECT_FALSE(value_to_number<int>(v).ok());
    EXPECT_DOUBLE_EQ(value_to_number<double>(v).value(), 42.5);
    v.data.dval = 1e30;
    EXPECT_FALSE(value_to_number<int64_t>(v).ok());

    v.type = PMIX_STRING;
    v.data.string = nullptr;
    EXPECT_FALSE(value_to_number<int>(v).ok());
    v.type = PMIX_UINT8;
    v.data.uint8 = 1;
    EXPECT_EQ(value_get_number(&v, &i64, PMIX_STRING).code(), PMIX_ERR_BAD_PARAM);
}

TEST(Info, XferDestructAndPersistence) {
    pmix_info_t src;
    memset(&src, 0, sizeof(src));
    strcpy(src.key, "pmix.hname");
    src.flags = PMIX_INFO_REQD | PMIX_INFO_PERSISTENT;
    ASSERT_TRUE(value_load(&src.value, "node1", PMIX_STRING).ok());
    pmix_info_t dst;
    ASSERT_TRUE(info_xfer(&dst, &src).ok());
    EXPECT_STREQ(dst.key, "pmix.hname");
    EXPECT_EQ(dst.flags, static_cast<pmix_info_directives_t>(PMIX_INFO_REQD));  // the copy owns its value
    EXPECT_STREQ(dst.value.data.string, "node1");
    EXPECT_NE(dst.value.data.string, src.value.data.string);
    info_destruct(&dst);
    EXPECT_EQ(dst.value.type, PMIX_UNDEF);
    EXPECT_EQ(dst.key[0], '\0');

    // A persistent info does not free its value (the string is still ours to free).
    char *keep = src.value.data.string;
    info_destruct(&src);
    EXPECT_STREQ(keep, "node1");
    free(keep);
}

TEST(Info, InfoArrayOwnsAndReleases) {
    auto infos = static_cast<pmix_info_t *>(calloc(2, sizeof(pmix_info_t)));
    strcpy(infos[0].key, "a");
    ASSERT_TRUE(value_load(&infos[0].value, "x", PMIX_STRING).ok());
    strcpy(infos[1].key, "b");
    {
        InfoArray holder(infos, 2);
        EXPECT_EQ(holder.size(), 2u);
        InfoArray moved(std::move(holder));
        EXPECT_TRUE(holder.empty());
        EXPECT_STREQ(moved[0].value.data.string, "x");
        pmix_info_t *raw = moved.release();
        EXPECT_EQ(raw, infos);
        EXPECT_TRUE(moved.empty());
        info_array_free(raw, 2);
    }
}

TEST(DataArray, CopyRejectsInconsistentInput) {
    pmix_data_array_t bad = {PMIX_UINT32, 3, nullptr};
    pmix_data_array_t *out = nullptr;
    EXPECT_EQ(data_array_copy(&out, &bad).code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(out, nullptr);
    int dummy;
    pmix_data_array_t unsupported = {PMIX_TOPO, 1, &dummy};
    EXPECT_EQ(data_array_copy(&out, &unsupported).code(), PMIX_ERR_NOT_SUPPORTED);
    pmix_data_array_t empty = {PMIX_STRING, 0, nullptr};
    ASSERT_TRUE(data_array_copy(&out, &empty).ok());
    EXPECT_EQ(out->size, 0u);
    data_array_free(out);
}

}  // namespace
}  // namespace pmixcpp

TEST(ValueHelpers, InfoArrayCopyIsDeep) {
    pmix_info_t src[2]{};
    std::strcpy(src[0].key, "a");
    src[0].value.type = PMIX_STRING;
    src[0].value.data.string = strdup("text");
    std::strcpy(src[1].key, "b");
    src[1].value.type = PMIX_UINT32;
    src[1].value.data.uint32 = 7;
    pmixcpp::InfoArray out;
    ASSERT_TRUE(pmixcpp::info_array_copy(src, 2, &out).ok());
    ASSERT_EQ(out.size(), 2u);
    EXPECT_NE(out[0].value.data.string, src[0].value.data.string) << "deep copy";
    EXPECT_STREQ(out[0].value.data.string, "text");
    EXPECT_STREQ(out[1].key, "b");
    EXPECT_EQ(out[1].value.data.uint32, 7u);
    ASSERT_TRUE(pmixcpp::info_array_copy(nullptr, 0, &out).ok());
    EXPECT_EQ(out.size(), 0u);
    pmixcpp::info_destruct(&src[0]);
}

TEST(ValueHelpers, InfoKeysFlagsAndMadeInfos) {
    using namespace pmixcpp;
    const uint32_t seven = 7;
    const bool no = false;
    pmix_info_t infos[4] = {make_info("size", &seven, PMIX_UINT32), make_info("off", &no, PMIX_BOOL),
                            make_info("on", nullptr, PMIX_UNDEF), make_info("name", "x", PMIX_STRING)};
    EXPECT_EQ(key_of(infos[0]), "size");
    EXPECT_EQ(key_view(infos[3]), "name");
    EXPECT_TRUE(key_is(infos[1], "off"));
    EXPECT_FALSE(key_is(infos[1], "of"));
    EXPECT_EQ(find_info(infos, 4, "name"), &infos[3]);
    EXPECT_EQ(find_info(infos, 4, "nam"), nullptr);
    EXPECT_EQ(find_info(nullptr, 4, "name"), nullptr);
    EXPECT_TRUE(info_flag(infos, 4, "size"));  // a number other than 0
    EXPECT_FALSE(info_flag(infos, 4, "off"));
    EXPECT_TRUE(info_flag(infos, 4, "on"));  // present without a value
    EXPECT_FALSE(info_flag(infos, 4, "absent"));
    EXPECT_EQ(infos[2].value.type, PMIX_UNDEF);
    EXPECT_STREQ(infos[3].value.data.string, "x");
    // A key that fills the whole field (no NUL before its end) is read to the field's end.
    pmix_info_t full{};
    memset(full.key, 'k', sizeof full.key);
    EXPECT_EQ(key_view(full).size(), sizeof full.key);
    for (auto &i : infos) info_destruct(&i);
}

TEST(ValueHelpers, ProcsOfOneProcOrAnArray) {
    pmix_proc_t p[2];
    std::memset(p, 0, sizeof(p));
    std::strcpy(p[0].nspace, "ns");
    p[0].rank = 3;
    std::strcpy(p[1].nspace, "ns");
    p[1].rank = 5;
    pmix_value_t one;
    one.type = PMIX_PROC;
    one.data.proc = &p[0];
    auto v = pmixcpp::procs_of(one);
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].rank, 3u);
    pmix_data_array_t arr{PMIX_PROC, 2, p};
    pmix_value_t many;
    many.type = PMIX_DATA_ARRAY;
    many.data.darray = &arr;
    v = pmixcpp::procs_of(many);
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[1].rank, 5u);
    pmix_value_t other;
    other.type = PMIX_UINT32;
    EXPECT_TRUE(pmixcpp::procs_of(other).empty());
}

// --- type traits ------------------------------------------------------------------------------

namespace pmixcpp {
namespace {

TEST(TypeTraits, OneTableAgreesWithTheTypes) {
    EXPECT_EQ(traits_of(PMIX_INT).size, sizeof(int));
    EXPECT_EQ(traits_of(PMIX_SIZE).size, sizeof(size_t));
    EXPECT_EQ(traits_of(PMIX_PID).size, sizeof(pid_t));
    EXPECT_EQ(traits_of(PMIX_TIME).size, sizeof(time_t));
    EXPECT_EQ(traits_of(PMIX_PROC).size, sizeof(pmix_proc_t));
    EXPECT_EQ(traits_of(PMIX_INFO).size, sizeof(pmix_info_t));
    EXPECT_TRUE(traits_of(PMIX_BOOL).is_bool);
    EXPECT_TRUE(traits_of(PMIX_INT8).is_signed);
    EXPECT_FALSE(traits_of(PMIX_UINT64).is_signed);
    EXPECT_TRUE(traits_of(PMIX_DOUBLE).is_float);
    EXPECT_TRUE(traits_of(PMIX_DATA_ARRAY).pointer_in_value);
    EXPECT_FALSE(traits_of(PMIX_STRING).pointer_in_value);
    EXPECT_EQ(traits_of(PMIX_POINTER).min_wire, 0);  // never sent
    EXPECT_EQ(traits_of(PMIX_REGEX).kind, type_kind::byte_object);
    EXPECT_EQ(traits_of(PMIX_UNDEF).kind, type_kind::none);
    EXPECT_EQ(traits_of(PMIX_TOPO).kind, type_kind::none);
    EXPECT_EQ(traits_of(4000).kind, type_kind::none);
    size_t numeric = 0;
    for (pmix_data_type_t t = 0; t < 200; ++t) {
        const type_traits &tr = traits_of(t);
        if (tr.kind == type_kind::scalar) {
            EXPECT_EQ(tr.min_wire, tr.size) << "type " << t;  // sent as its bits
            EXPECT_TRUE(tr.size == 1 || tr.size == 2 || tr.size == 4 || tr.size == 8) << "type " << t;
        } else {
            EXPECT_FALSE(tr.numeric) << "type " << t;
        }
        if (tr.kind != type_kind::none) EXPECT_NE(tr.size, 0u) << "type " << t;
        numeric += tr.numeric;
    }
    EXPECT_EQ(numeric, 14u);  // the integer and floating types value_get_number converts between
}

}  // namespace
}  // namespace pmixcpp
