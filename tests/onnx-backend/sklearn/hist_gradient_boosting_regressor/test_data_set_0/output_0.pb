BvariableJ`O│JCЫIC≤╤2C|dC≤╤2CП≤XC& ЕB~уOC&┼Cх%IC&(C╒╘CдлCG\ЭB©RCюYБBr
C!ёАB1┴КBч╫AC≤╤2CzEC┤б!C&┼C