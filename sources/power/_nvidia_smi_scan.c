/* The fast path of sources/power/nvidia_smi.py: clean nvidia-smi CSV lines read at C speed.

   `nvidia-smi --query-gpu=timestamp,index,power.draw,... --format=csv -lms 100` writes one
   reading per line, e.g. "2026/11/20 00:00:00.100, 3, 310.39 W". scan() reads a range of such
   lines into three arrays (naive wall-clock microseconds since 1970-01-01, GPU index, watts)
   and gives up at the first line that is anything else: a blank or repeated header line,
   [N/A], a carriage return, another layout, a value it is not sure to read exactly as the
   general path would. The Python reader then reads the whole file on its general path, which
   names the problem. So this file needs to be right only on the lines it accepts.

   Why C: a 10-million-row log (8 GPUs x 10 Hz x 36 h) takes 1.6 s to read and convert with
   polars' CSV reader (the timestamps and the " W" suffixes are string work), and issue 4 asks
   for parse + validate + energy within 2x a bare DuckDB count(*) (about 1 s) over the file.
   DuckDB's own typed read took 3.2 s; numba 2.9 s of start-up in every new process. This
   scan reads such a log in 0.2-0.4 s on two threads (one range of lines each), about half
   of it the first writes to the arrays' fresh pages. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* The timestamp layout nvidia-smi writes: 'd' is any ASCII digit, other characters themselves. */
static const char STAMP[] = "dddd/dd/dd dd:dd:dd";
#define STAMP_LEN 19

static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m) {
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return days[m - 1] + (m == 2 && leap);
}

/* "YYYY/MM/DD HH:MM:SS" with an optional fraction of 1 to 6 digits, at *pos. Returns 0 and
   moves *pos past it, or -1. Checks character by character and stops at the first one out of
   place, so it never reads past the newline that ends the line. */
static int read_stamp(const unsigned char *buf, Py_ssize_t *pos, int64_t *micros) {
    const unsigned char *s = buf + *pos;
    for (int k = 0; k < STAMP_LEN; k++) {
        if (STAMP[k] == 'd' ? !is_digit(s[k]) : s[k] != (unsigned char)STAMP[k]) return -1;
    }
#define NUM2(k) ((s[k] - '0') * 10 + (s[k + 1] - '0'))
    int year = NUM2(0) * 100 + NUM2(2), month = NUM2(5), day = NUM2(8);
    int hour = NUM2(11), minute = NUM2(14), second = NUM2(17);
#undef NUM2
    /* Only plain, surely valid instants (no leap second, years of real logs). */
    if (year < 1970 || year > 2199 || month < 1 || month > 12 || day < 1
        || day > days_in_month(year, month) || hour > 23 || minute > 59 || second > 59)
        return -1;
    Py_ssize_t i = STAMP_LEN;
    int64_t fraction = 0;
    if (s[i] == '.') {
        int digits = 0;
        for (i++; is_digit(s[i]); i++, digits++) {
            if (digits == 6) return -1; /* beyond microseconds: left to the general path */
            fraction = fraction * 10 + (s[i] - '0');
        }
        if (digits == 0) return -1;
        for (; digits < 6; digits++) fraction *= 10;
    }
    *micros = ((days_from_civil(year, month, day) * 24 + hour) * 60 + minute) * 60000000LL
              + second * 1000000LL + fraction;
    *pos += i;
    return 0;
}

/* A GPU index: 1 to 9 digits, no leading zero (nvidia-smi writes none; the general path keeps
   the index as written in device_id, so "00" is left to it). */
static int read_index(const unsigned char *buf, Py_ssize_t *pos, int64_t *index) {
    Py_ssize_t i = *pos;
    int64_t value = 0;
    int digits = 0;
    if (buf[i] == '0' && is_digit(buf[i + 1])) return -1;
    for (; is_digit(buf[i]); i++, digits++) {
        if (digits == 9) return -1;
        value = value * 10 + (buf[i] - '0');
    }
    if (digits == 0) return -1;
    *index = value;
    *pos = i;
    return 0;
}

/* A power "412.34" or "412.34 W": digits, optionally a point and digits, 15 digits at most.
   The digits as one integer and the power of ten are both exact doubles, so their quotient is
   the correctly rounded value of the decimal, as any exact text-to-float conversion gives. */
static int read_power(const unsigned char *buf, Py_ssize_t *pos, double *watts) {
    Py_ssize_t i = *pos;
    int64_t mantissa = 0;
    double scale = 1.0;
    int digits = 0;
    for (; is_digit(buf[i]); i++) {
        if (++digits > 15) return -1;
        mantissa = mantissa * 10 + (buf[i] - '0');
    }
    if (digits == 0) return -1;
    if (buf[i] == '.') {
        int before = digits;
        for (i++; is_digit(buf[i]); i++) {
            if (++digits > 15) return -1;
            mantissa = mantissa * 10 + (buf[i] - '0');
            scale *= 10.0;
        }
        if (digits == before) return -1;
    }
    if (buf[i] == ' ' && buf[i + 1] == 'W') i += 2;
    *watts = (double)mantissa / scale;
    *pos = i;
    return 0;
}

/* Lines of buf[start, stop) (stop just after a newline) into the arrays. Returns the number
   of rows, or -(k + 1) when the k-th line (from 0) is not a clean reading. */
static Py_ssize_t scan_lines(const unsigned char *buf, Py_ssize_t start, Py_ssize_t stop,
                             int n_fields, int stamp_at, int index_at, int power_at,
                             int64_t *micros, int64_t *index, double *watts,
                             Py_ssize_t capacity) {
    Py_ssize_t i = start, row = 0;
    /* nvidia-smi stamps every GPU of one query with the same text: a stamp equal to the
       previous line's (same bytes, then a comma or newline) has its value, unparsed */
    const unsigned char *last_stamp = NULL;
    Py_ssize_t last_len = 0;
    while (i < stop) {
        if (row == capacity) return -(row + 1);
        for (int field = 0;; field++) {
            int failed = 0;
            if (field == stamp_at) {
                if (last_stamp != NULL && i + last_len < stop
                    && memcmp(buf + i, last_stamp, (size_t)last_len) == 0
                    && (buf[i + last_len] == ',' || buf[i + last_len] == '\n')) {
                    micros[row] = micros[row - 1];
                    i += last_len;
                } else {
                    Py_ssize_t from = i;
                    failed = read_stamp(buf, &i, &micros[row]);
                    last_stamp = buf + from;
                    last_len = i - from;
                }
            } else {
                while (buf[i] == ' ') i++;
                if (field == index_at) failed = read_index(buf, &i, &index[row]);
                else if (field == power_at) failed = read_power(buf, &i, &watts[row]);
                else while (buf[i] != ',' && buf[i] != '\n') i++; /* a field not used */
            }
            if (failed) return -(row + 1);
            if (buf[i] == '\n' && field == n_fields - 1) break;
            if (buf[i] != ',' || field == n_fields - 1) return -(row + 1);
            i++;
        }
        i++; /* the newline */
        row++;
    }
    return row;
}

static PyObject *scan(PyObject *self, PyObject *args) {
    Py_buffer data, micros, index, watts;
    Py_ssize_t start, stop, rows = 0;
    int n_fields, stamp_at, index_at, power_at;
    if (!PyArg_ParseTuple(args, "y*nniiiiw*w*w*", &data, &start, &stop, &n_fields, &stamp_at,
                          &index_at, &power_at, &micros, &index, &watts))
        return NULL;
    const unsigned char *buf = data.buf;
    Py_ssize_t capacity = micros.len / 8;
    if (index.len / 8 < capacity) capacity = index.len / 8;
    if (watts.len / 8 < capacity) capacity = watts.len / 8;
    const char *problem = NULL;
    if (start < 0 || stop > data.len || start > stop || (stop > start && buf[stop - 1] != '\n'))
        problem = "start and stop must delimit whole lines of data";
    else if (n_fields < 3 || stamp_at < 0 || index_at < 0 || power_at < 0
             || stamp_at >= n_fields || index_at >= n_fields || power_at >= n_fields
             || stamp_at == index_at || stamp_at == power_at || index_at == power_at)
        problem = "field positions must be distinct and below n_fields (>= 3)";
    if (problem == NULL) {
        Py_BEGIN_ALLOW_THREADS
        rows = scan_lines(buf, start, stop, n_fields, stamp_at, index_at, power_at,
                          micros.buf, index.buf, watts.buf, capacity);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&data);
    PyBuffer_Release(&micros);
    PyBuffer_Release(&index);
    PyBuffer_Release(&watts);
    if (problem != NULL) {
        PyErr_SetString(PyExc_ValueError, problem);
        return NULL;
    }
    return PyLong_FromSsize_t(rows);
}

static PyMethodDef METHODS[] = {
    {"scan", scan, METH_VARARGS,
     "scan(data, start, stop, n_fields, stamp_at, index_at, power_at, micros, index, watts)"
     " -> rows read, or -(k + 1) when the k-th line is not a clean reading"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, "_nvidia_smi_scan",
    "Clean nvidia-smi CSV lines read at C speed (see sources/power/nvidia_smi.py).", -1, METHODS,
};

PyMODINIT_FUNC PyInit__nvidia_smi_scan(void) { return PyModule_Create(&MODULE); }
