BvariableJ`S#CˆC_ÇCï1C|ÊC¶»CÕeCüßCP·C%(Ct0
Cc’CÒùşB‘kãBôä:C¯kûB¨4	CjsÏBÏ}ÖBªêC+·C}C·á
C`C