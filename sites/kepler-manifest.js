// A copy of shared/reference/kepler-manifest.json (the structure and sizes of the
// ETSI Kepler reference page), kept in the repository so the generator needs
// nothing outside it. test/unit/sites.test.js checks it still equals the original
// when shared/ is beside the repository.
export default {
 "name": "ETSI Kepler Web Reference Page (ETSI TR 102 505), structure and sizes of the original",
 "note": "Facts measured from the original page: element order as it appears in index.html, byte sizes, gzip -9 sizes (compressibility), image pixel sizes. No content.",
 "document": {
  "path": "index.html",
  "bytes": 17323,
  "gzip_bytes": 4551,
  "charset": "ISO-8859-1",
  "table_width": 800
 },
 "objects_total_including_document": 75,
 "bytes_total_including_document": 815804,
 "subresources": [
  {
   "path": "css/kepler.css",
   "element": "link",
   "bytes": 644,
   "gzip_bytes": 362
  },
  {
   "path": "css/f1.css",
   "element": "link",
   "bytes": 96,
   "gzip_bytes": 65
  },
  {
   "path": "css/f2.css",
   "element": "link",
   "bytes": 189,
   "gzip_bytes": 122
  },
  {
   "path": "css/f3.css",
   "element": "link",
   "bytes": 190,
   "gzip_bytes": 138
  },
  {
   "path": "css/f4.css",
   "element": "link",
   "bytes": 90,
   "gzip_bytes": 73
  },
  {
   "path": "css/f5.css",
   "element": "link",
   "bytes": 109,
   "gzip_bytes": 78
  },
  {
   "path": "css/f1_xxl.css",
   "element": "link",
   "bytes": 7668,
   "gzip_bytes": 2019
  },
  {
   "path": "css/f2_xxl.css",
   "element": "link",
   "bytes": 13201,
   "gzip_bytes": 3236
  },
  {
   "path": "css/f3_xxl.css",
   "element": "link",
   "bytes": 16517,
   "gzip_bytes": 3362
  },
  {
   "path": "txt/d1.txt",
   "element": "iframe",
   "bytes": 61031,
   "gzip_bytes": 1285,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d2.txt",
   "element": "iframe",
   "bytes": 27462,
   "gzip_bytes": 11591,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d3.txt",
   "element": "iframe",
   "bytes": 26434,
   "gzip_bytes": 10689,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d4.txt",
   "element": "iframe",
   "bytes": 23536,
   "gzip_bytes": 9700,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d5.txt",
   "element": "iframe",
   "bytes": 26043,
   "gzip_bytes": 9996,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d6.txt",
   "element": "iframe",
   "bytes": 5366,
   "gzip_bytes": 1950,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d7.txt",
   "element": "iframe",
   "bytes": 3885,
   "gzip_bytes": 1457,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d8.txt",
   "element": "iframe",
   "bytes": 97147,
   "gzip_bytes": 37638,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d9.txt",
   "element": "iframe",
   "bytes": 38100,
   "gzip_bytes": 14932,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d10.txt",
   "element": "iframe",
   "bytes": 1659,
   "gzip_bytes": 883,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d11.txt",
   "element": "iframe",
   "bytes": 1547,
   "gzip_bytes": 820,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d12.txt",
   "element": "iframe",
   "bytes": 881,
   "gzip_bytes": 480,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d13.txt",
   "element": "iframe",
   "bytes": 1064,
   "gzip_bytes": 587,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d14.txt",
   "element": "iframe",
   "bytes": 924,
   "gzip_bytes": 532,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d15.txt",
   "element": "iframe",
   "bytes": 866,
   "gzip_bytes": 501,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d16.txt",
   "element": "iframe",
   "bytes": 995,
   "gzip_bytes": 536,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d17.txt",
   "element": "iframe",
   "bytes": 747,
   "gzip_bytes": 460,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d18.txt",
   "element": "iframe",
   "bytes": 646,
   "gzip_bytes": 387,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d19.txt",
   "element": "iframe",
   "bytes": 685,
   "gzip_bytes": 410,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d20.txt",
   "element": "iframe",
   "bytes": 1520,
   "gzip_bytes": 791,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d21.txt",
   "element": "iframe",
   "bytes": 879,
   "gzip_bytes": 515,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d22.txt",
   "element": "iframe",
   "bytes": 1056,
   "gzip_bytes": 598,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d23.txt",
   "element": "iframe",
   "bytes": 1146,
   "gzip_bytes": 635,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d24.txt",
   "element": "iframe",
   "bytes": 663,
   "gzip_bytes": 402,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d25.txt",
   "element": "iframe",
   "bytes": 1372,
   "gzip_bytes": 704,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d26.txt",
   "element": "iframe",
   "bytes": 666,
   "gzip_bytes": 397,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d27.txt",
   "element": "iframe",
   "bytes": 2126,
   "gzip_bytes": 1046,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d28.txt",
   "element": "iframe",
   "bytes": 843,
   "gzip_bytes": 451,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d29.txt",
   "element": "iframe",
   "bytes": 387,
   "gzip_bytes": 251,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d30.txt",
   "element": "iframe",
   "bytes": 481,
   "gzip_bytes": 308,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d31.txt",
   "element": "iframe",
   "bytes": 899,
   "gzip_bytes": 503,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "txt/d32.txt",
   "element": "iframe",
   "bytes": 115557,
   "gzip_bytes": 44249,
   "attr_width": "100",
   "attr_height": "30"
  },
  {
   "path": "pic/img1_45.jpg",
   "element": "img",
   "bytes": 46336,
   "gzip_bytes": 45784,
   "pixels": [
    500,
    375
   ],
   "attr_width": "500",
   "attr_height": "375",
   "attr_class": "img45"
  },
  {
   "path": "pic/img3_45.jpg",
   "element": "img",
   "bytes": 46108,
   "gzip_bytes": 45546,
   "pixels": [
    500,
    375
   ],
   "attr_class": "img45"
  },
  {
   "path": "pic/img2_45.jpg",
   "element": "img",
   "bytes": 46820,
   "gzip_bytes": 46294,
   "pixels": [
    375,
    500
   ],
   "attr_class": "img45"
  },
  {
   "path": "pic/p020x015n001.jpg",
   "element": "img",
   "bytes": 743,
   "gzip_bytes": 592,
   "pixels": [
    20,
    15
   ],
   "attr_width": "20",
   "attr_height": "15"
  },
  {
   "path": "pic/p020x015n002.jpg",
   "element": "img",
   "bytes": 754,
   "gzip_bytes": 603,
   "pixels": [
    20,
    15
   ],
   "attr_width": "20",
   "attr_height": "15"
  },
  {
   "path": "pic/p020x015n011.jpg",
   "element": "img",
   "bytes": 770,
   "gzip_bytes": 621,
   "pixels": [
    20,
    15
   ],
   "attr_width": "20",
   "attr_height": "15"
  },
  {
   "path": "pic/p020x015n012.jpg",
   "element": "img",
   "bytes": 757,
   "gzip_bytes": 608,
   "pixels": [
    20,
    15
   ],
   "attr_width": "20",
   "attr_height": "15"
  },
  {
   "path": "pic/p020x015n017.jpg",
   "element": "img",
   "bytes": 822,
   "gzip_bytes": 675,
   "pixels": [
    20,
    15
   ],
   "attr_width": "20",
   "attr_height": "15"
  },
  {
   "path": "pic/p020x015n031.jpg",
   "element": "img",
   "bytes": 772,
   "gzip_bytes": 622,
   "pixels": [
    20,
    15
   ],
   "attr_width": "20",
   "attr_height": "15"
  },
  {
   "path": "pic/p020x015n042.jpg",
   "element": "img",
   "bytes": 751,
   "gzip_bytes": 602,
   "pixels": [
    20,
    15
   ],
   "attr_width": "20",
   "attr_height": "15"
  },
  {
   "path": "pic/p020x015n045.jpg",
   "element": "img",
   "bytes": 778,
   "gzip_bytes": 630,
   "pixels": [
    20,
    15
   ],
   "attr_width": "20",
   "attr_height": "15"
  },
  {
   "path": "pic/p020x015n046.jpg",
   "element": "img",
   "bytes": 797,
   "gzip_bytes": 650,
   "pixels": [
    20,
    15
   ],
   "attr_width": "20",
   "attr_height": "15"
  },
  {
   "path": "pic/p020x015n052.jpg",
   "element": "img",
   "bytes": 728,
   "gzip_bytes": 578,
   "pixels": [
    20,
    15
   ],
   "attr_width": "20",
   "attr_height": "15"
  },
  {
   "path": "pic/p020x015n054.jpg",
   "element": "img",
   "bytes": 765,
   "gzip_bytes": 616,
   "pixels": [
    20,
    15
   ],
   "attr_width": "20",
   "attr_height": "15"
  },
  {
   "path": "pic/p020x015n073.jpg",
   "element": "img",
   "bytes": 760,
   "gzip_bytes": 609,
   "pixels": [
    20,
    15
   ],
   "attr_width": "20",
   "attr_height": "15"
  },
  {
   "path": "pic/p080x060n002.jpg",
   "element": "img",
   "bytes": 2257,
   "gzip_bytes": 2151,
   "pixels": [
    80,
    60
   ],
   "attr_width": "80",
   "attr_height": "60"
  },
  {
   "path": "pic/p080x060n029.jpg",
   "element": "img",
   "bytes": 2731,
   "gzip_bytes": 2624,
   "pixels": [
    80,
    60
   ],
   "attr_width": "80",
   "attr_height": "60"
  },
  {
   "path": "pic/p080x060n061.jpg",
   "element": "img",
   "bytes": 2125,
   "gzip_bytes": 2019,
   "pixels": [
    80,
    60
   ],
   "attr_width": "80",
   "attr_height": "60"
  },
  {
   "path": "pic/p080x060n069.jpg",
   "element": "img",
   "bytes": 2001,
   "gzip_bytes": 1886,
   "pixels": [
    80,
    60
   ],
   "attr_width": "80",
   "attr_height": "60"
  },
  {
   "path": "pic/p080x060n087.jpg",
   "element": "img",
   "bytes": 1908,
   "gzip_bytes": 1799,
   "pixels": [
    80,
    60
   ],
   "attr_width": "80",
   "attr_height": "60"
  },
  {
   "path": "pic/p120x050n000.jpg",
   "element": "img",
   "bytes": 2367,
   "gzip_bytes": 2257,
   "pixels": [
    120,
    50
   ],
   "attr_width": "120",
   "attr_height": "50"
  },
  {
   "path": "pic/p120x050n005.jpg",
   "element": "img",
   "bytes": 2992,
   "gzip_bytes": 2885,
   "pixels": [
    120,
    50
   ],
   "attr_width": "120",
   "attr_height": "50"
  },
  {
   "path": "pic/p120x050n016.jpg",
   "element": "img",
   "bytes": 2870,
   "gzip_bytes": 2767,
   "pixels": [
    120,
    50
   ],
   "attr_width": "120",
   "attr_height": "50"
  },
  {
   "path": "pic/p120x050n037.jpg",
   "element": "img",
   "bytes": 1947,
   "gzip_bytes": 1832,
   "pixels": [
    120,
    50
   ],
   "attr_width": "120",
   "attr_height": "50"
  },
  {
   "path": "pic/p120x050n038.jpg",
   "element": "img",
   "bytes": 2608,
   "gzip_bytes": 2499,
   "pixels": [
    120,
    50
   ],
   "attr_width": "120",
   "attr_height": "50"
  },
  {
   "path": "pic/p120x050n050.jpg",
   "element": "img",
   "bytes": 2150,
   "gzip_bytes": 2040,
   "pixels": [
    120,
    50
   ],
   "attr_width": "120",
   "attr_height": "50"
  },
  {
   "path": "pic/p120x050n060.jpg",
   "element": "img",
   "bytes": 2292,
   "gzip_bytes": 2173,
   "pixels": [
    120,
    50
   ],
   "attr_width": "120",
   "attr_height": "50"
  },
  {
   "path": "pic/p120x050n061.jpg",
   "element": "img",
   "bytes": 2226,
   "gzip_bytes": 2114,
   "pixels": [
    120,
    50
   ],
   "attr_width": "120",
   "attr_height": "50"
  },
  {
   "path": "pic/p120x050n090.jpg",
   "element": "img",
   "bytes": 1951,
   "gzip_bytes": 1843,
   "pixels": [
    120,
    50
   ],
   "attr_width": "120",
   "attr_height": "50"
  },
  {
   "path": "pic/p120x050n092.jpg",
   "element": "img",
   "bytes": 2102,
   "gzip_bytes": 1995,
   "pixels": [
    120,
    50
   ],
   "attr_width": "120",
   "attr_height": "50"
  },
  {
   "path": "pic/sym004x006n001.gif",
   "element": "img",
   "bytes": 46,
   "gzip_bytes": 59,
   "pixels": [
    4,
    6
   ],
   "attr_width": "4",
   "attr_height": "6",
   "attr_class": "noborder"
  },
  {
   "path": "pic/sym004x006n002.gif",
   "element": "img",
   "bytes": 98,
   "gzip_bytes": 105,
   "pixels": [
    4,
    6
   ],
   "attr_width": "4",
   "attr_height": "6",
   "attr_class": "noborder"
  },
  {
   "path": "noncompressible/bin.html",
   "element": "iframe",
   "bytes": 130032,
   "gzip_bytes": 129252,
   "attr_width": "800",
   "attr_height": "200"
  }
 ],
 "not_part_of_page": [
  "favicon.ico (5430 bytes) is requested by browsers automatically; the original directory ships one"
 ]
};
