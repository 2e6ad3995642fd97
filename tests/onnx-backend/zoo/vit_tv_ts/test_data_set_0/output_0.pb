
BlogitsJPpÌ&¿§MŠ¿±Ùl¿çP*>DÏA¿DÜ?Cáó>–Èk?KO]>Ú\l¿¸S×¿mð!>ÆÜ	¿'®?eIu¿Ïh,¿T(?¦H´>½1)?G°À